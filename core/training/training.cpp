#include "training/training.hpp"

#include <omp.h>

#include <cmath>
#include <stdexcept>

#include "numerics/attention.hpp"
#include "numerics/backward.hpp"
#include "numerics/positions.hpp"
#include "base/random.hpp"

namespace al {

namespace {

// A trainable matrix with its gradient and Adam's moment estimates.
struct Parameter {
  Matrix value, grad, m, v;
  bool trainable = true;

  void init(Matrix start, bool train = true) {
    value = std::move(start);
    grad = m = v = Matrix::Zero(value.rows(), value.cols());
    trainable = train;
  }
};

Matrix normal_matrix(Index rows, Index cols, std::uint64_t seed, double stddev) {
  const Tensor t = random_normal({rows, cols}, seed, stddev);
  return ConstMatrixMap(t.data.data(), rows, cols);
}

// Sinusoidal positions (Vaswani et al.): (L, d), sin on even columns, cos on odd.
Matrix sinusoidal_positions(Index length, Index d) {
  Matrix p(length, d);
  for (Index l = 0; l < length; ++l)
    for (Index c = 0; c < d; ++c) p(l, c) = static_cast<float>(sinusoidal_position(l, c, d));
  return p;
}

TensorPtr tensor_of(const Matrix& m, std::vector<Index> shape) {
  return make_tensor(Tensor(std::move(shape), std::vector<float>(m.data(), m.data() + m.size())));
}

// The model's tensors are tiny (a step is about a millisecond of work): waking a
// second thread for compute() and backward() (base/thread_team) costs more than
// it saves, and on a loaded machine much more. Training runs on the calling
// thread (nthreads-var is per thread: the rest of the app keeps its team).
class SingleThreaded {
 public:
  SingleThreaded() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~SingleThreaded() { omp_set_num_threads(saved_); }
  SingleThreaded(const SingleThreaded&) = delete;
  SingleThreaded& operator=(const SingleThreaded&) = delete;

 private:
  int saved_;
};

// Training batches and held-out sequences come from disjoint sequence counters.
constexpr std::uint64_t kHeldoutFirst = std::uint64_t{1} << 40;

}  // namespace

TrainingConfig default_training(ToyTask task) {
  TrainingConfig c;
  c.task = task;
  c.steps = task == ToyTask::PreviousToken ? 300 : task == ToyTask::MaxSoFar ? 1500 : 3000;
  if (task == ToyTask::Duplicate) c.learning_rate = 3e-3;
  return c;
}

struct Trainer::Model {
  TrainingConfig config;
  ToyTaskShape shape;
  int steps = 0;
  Parameter embed, positions;                     // (vocab, d), (L, d)
  Parameter w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o;  // (d, d) math layout, (1, d)
  Parameter unembed, b_unembed;                   // (d, output_vocab), (1, output_vocab)
  ToyBatch heldout;

  std::array<Parameter*, 12> all() {
    return {&embed, &positions, &w_q, &w_k, &w_v, &w_o, &b_q, &b_k, &b_v, &b_o, &unembed, &b_unembed};
  }

  // x (B·L, d) = embedding of each token + its position's.
  Matrix embedded(const ToyBatch& batch) const {
    const Index d = config.d_model;
    Matrix x(batch.batch * batch.length, d);
    for (Index r = 0; r < x.rows(); ++r)
      x.row(r) = embed.value.row(batch.tokens[size_t(r)]) + positions.value.row(r % batch.length);
    return x;
  }

  Session session_for(const Matrix& x, Index sequences) const {
    const Index d = config.d_model;
    Session s;
    s.config.d_model = d;
    s.config.num_heads = config.heads;
    s.config.bias = true;
    s.config.mask.causal = shape.causal;
    // RoPE: no position in x; the attention turns q and k by position instead.
    if (config.positions == Positions::Rope) s.config.positional.type = PositionalType::Rope;
    s.x = tensor_of(x, {sequences, shape.length, d});
    s.weights.w_q = tensor_of(w_q.value, {d, d});
    s.weights.w_k = tensor_of(w_k.value, {d, d});
    s.weights.w_v = tensor_of(w_v.value, {d, d});
    s.weights.w_o = tensor_of(w_o.value, {d, d});
    s.weights.b_q = tensor_of(b_q.value, {d});
    s.weights.b_k = tensor_of(b_k.value, {d});
    s.weights.b_v = tensor_of(b_v.value, {d});
    s.weights.b_o = tensor_of(b_o.value, {d});
    return s;
  }

  // Logits (B·L, output_vocab) of the attention layer's output (B·L, d).
  Matrix logits_of(const Tensor& output) const {
    const ConstMatrixMap out(output.data.data(), output.size() / config.d_model, config.d_model);
    Matrix logits = out * unembed.value;
    logits.rowwise() += b_unembed.value.row(0);
    return logits;
  }

  std::shared_ptr<const Trace> forward(const Session& s) const {
    auto trace = compute(s);
    if (!trace) throw std::runtime_error("training: " + trace.error().message);
    return *trace;
  }
};

Trainer::Trainer(const TrainingConfig& config) : model_(std::make_unique<Model>()) {
  Model& m = *model_;
  m.config = config;
  if (m.config.steps <= 0) m.config.steps = default_training(config.task).steps;
  m.shape = toy_task_shape(config.task);
  const Index d = config.d_model, L = m.shape.length;
  const std::uint64_t seed = config.seed * 64;
  const double w = 1.0 / std::sqrt(static_cast<double>(d));
  m.embed.init(normal_matrix(m.shape.vocab, d, seed + 1, 1.0));
  if (config.positions == Positions::Learned) m.positions.init(normal_matrix(L, d, seed + 2, 1.0));
  else if (config.positions == Positions::Sinusoidal) m.positions.init(sinusoidal_positions(L, d), false);
  else m.positions.init(Matrix::Zero(L, d), false);  // RoPE: positions enter in the attention
  m.w_q.init(normal_matrix(d, d, seed + 3, w));
  m.w_k.init(normal_matrix(d, d, seed + 4, w));
  m.w_v.init(normal_matrix(d, d, seed + 5, w));
  m.w_o.init(normal_matrix(d, d, seed + 6, w));
  for (Parameter* b : {&m.b_q, &m.b_k, &m.b_v, &m.b_o}) b->init(Matrix::Zero(1, d));
  m.unembed.init(normal_matrix(d, m.shape.output_vocab, seed + 7, w));
  m.b_unembed.init(Matrix::Zero(1, m.shape.output_vocab));
  m.heldout = toy_batch(config.task, config.seed, kHeldoutFirst, config.heldout);
}

Trainer::~Trainer() = default;

int Trainer::steps_done() const { return model_->steps; }
const TrainingConfig& Trainer::config() const { return model_->config; }

double Trainer::step() {
  const SingleThreaded one_thread;
  Model& m = *model_;
  const Index d = m.config.d_model, B = m.config.batch, L = m.shape.length;
  const ToyBatch batch = toy_batch(m.config.task, m.config.seed, static_cast<std::uint64_t>(m.steps) * B, B);

  // Forward: embeddings, the attention layer (the app's compute), the unembedding.
  const Matrix x = m.embedded(batch);
  const Session s = m.session_for(x, B);
  const auto trace = m.forward(s);
  const Tensor& output = trace->stage(Stage::Output);  // (B, L, d)
  Matrix d_logits = m.logits_of(output);               // becomes dL/dlogits (B·L, output_vocab)

  // Cross-entropy, mean over the scored positions: dL/dlogits = (softmax − one-hot) / N.
  Index scored = 0;
  for (int t : batch.targets) scored += t >= 0;
  double loss = 0;
  for (Index r = 0; r < d_logits.rows(); ++r) {
    const int target = batch.targets[size_t(r)];
    if (target < 0) {
      d_logits.row(r).setZero();
      continue;
    }
    const float max = d_logits.row(r).maxCoeff();
    Eigen::RowVectorXf p = (d_logits.row(r).array() - max).exp().matrix();
    const float sum = p.sum();
    p /= sum;
    loss -= std::log(std::max(static_cast<double>(p[target]), 1e-30));
    p[target] -= 1.0f;
    d_logits.row(r) = p / static_cast<float>(scored);
  }
  loss /= static_cast<double>(scored);

  // Backward: the unembedding, then the attention layer (the app's backward), then the embeddings.
  const ConstMatrixMap out(output.data.data(), B * L, d);
  m.unembed.grad.noalias() = out.transpose() * d_logits;
  m.b_unembed.grad = d_logits.colwise().sum();
  Tensor upstream({B, L, d});
  MatrixMap(upstream.data.data(), B * L, d).noalias() = d_logits * m.unembed.value.transpose();
  BackwardOptions lean;
  lean.keep_stages = false;
  auto grads = backward(s, *trace, upstream, lean);
  if (!grads) throw std::runtime_error("training: " + grads.error().message);
  auto grad_of = [&](const char* name, Parameter& p) {
    const Tensor* g = grads->input(name);
    p.grad = ConstMatrixMap(g->data.data(), p.value.rows(), p.value.cols());
  };
  grad_of("w_q", m.w_q), grad_of("w_k", m.w_k), grad_of("w_v", m.w_v), grad_of("w_o", m.w_o);
  grad_of("b_q", m.b_q), grad_of("b_k", m.b_k), grad_of("b_v", m.b_v), grad_of("b_o", m.b_o);
  const ConstMatrixMap dx(grads->input("x")->data.data(), B * L, d);
  m.embed.grad.setZero();
  m.positions.grad.setZero();
  for (Index r = 0; r < B * L; ++r) {
    m.embed.grad.row(batch.tokens[size_t(r)]) += dx.row(r);
    m.positions.grad.row(r % L) += dx.row(r);
  }

  // Adam (β1 = 0.9, β2 = 0.999, ε = 1e-8) with bias correction.
  ++m.steps;
  const double c1 = 1.0 - std::pow(0.9, m.steps), c2 = 1.0 - std::pow(0.999, m.steps);
  const float rate = static_cast<float>(m.config.learning_rate * std::sqrt(c2) / c1);
  for (Parameter* p : m.all()) {
    if (!p->trainable) continue;
    p->m = 0.9f * p->m + 0.1f * p->grad;
    p->v = 0.999f * p->v + 0.001f * p->grad.cwiseProduct(p->grad);
    p->value.array() -= rate * p->m.array() / (p->v.array().sqrt() + 1e-8f);
  }
  return loss;
}

double Trainer::heldout_accuracy() const {
  const SingleThreaded one_thread;
  const Model& m = *model_;
  const Session s = m.session_for(m.embedded(m.heldout), m.heldout.batch);
  const Matrix logits = m.logits_of(m.forward(s)->stage(Stage::Output));
  Index right = 0, scored = 0;
  for (Index r = 0; r < logits.rows(); ++r) {
    const int target = m.heldout.targets[size_t(r)];
    if (target < 0) continue;
    Index best = 0;
    logits.row(r).maxCoeff(&best);
    right += best == target;
    ++scored;
  }
  return scored ? static_cast<double>(right) / static_cast<double>(scored) : 0.0;
}

std::vector<int> Trainer::heldout_tokens(Index sequences) const {
  const ToyBatch& h = model_->heldout;
  return std::vector<int>(h.tokens.begin(), h.tokens.begin() + sequences * h.length);
}

Session Trainer::heldout_session(Index sequences) const {
  const Model& m = *model_;
  ToyBatch first = m.heldout;
  first.batch = sequences;
  first.tokens = heldout_tokens(sequences);
  Session s = m.session_for(m.embedded(first), sequences);
  const std::vector<std::string> symbols = toy_input_symbols(m.config.task);
  for (Index i = 0; i < first.length; ++i) s.tokens.push_back(symbols[size_t(first.tokens[size_t(i)])]);
  return s;
}

}  // namespace al
