#include "numerics/attention.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <new>

#include "base/heap_policy.hpp"
#include "base/thread_team.hpp"
#include "model/stage_heads.hpp"
#include "numerics/attention_kernels.hpp"
#include "numerics/attention_plan.hpp"
#include "numerics/positions.hpp"
#include "numerics/stage_summary.hpp"

namespace al {

using detail::Plan;

Index default_memory_limit() {
  // Half the physical memory: the trace must leave room for the app and the OS.
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return Index{4} << 30;  // unknown: assume a small machine
  return static_cast<Index>(pages) * page_size / 2;
}

std::optional<Error> validate(const Session& session) {
  auto plan = detail::make_plan(session);
  if (!plan) return plan.error();
  return std::nullopt;
}

Result<Index> estimate_trace_bytes(const Session& session, const std::optional<StageSet>& keep) {
  auto plan = detail::make_plan(session);
  if (!plan) return plan.error();
  return detail::trace_bytes(*plan, keep);
}

namespace {

Error cancelled() { return make_error(ErrorCode::Cancelled, "the computation was cancelled by a newer edit"); }

// Which stages of a previous trace still hold for the new session: a stage is
// reused when everything it was computed from is unchanged (same tensor
// pointers, same config values) and every stage it reads is reused too.
struct Reuse {
  std::array<bool, kStageCount> stage{};  // indexed by Stage
  bool mask = false;                      // the combined mask and fully masked rows
  bool operator[](Stage s) const { return stage[static_cast<int>(s)]; }
};

constexpr std::array<Stage, 3> kProjected = {Stage::Q, Stage::K, Stage::V};  // indexed by kQ, kK, kV

Reuse decide_reuse(const Plan& now, const Plan* before) {
  Reuse r;
  if (!before || !detail::same_dims(now.dims, before->dims)) return r;
  auto set = [&](Stage s, bool v) { r.stage[static_cast<int>(s)] = v; };
  const bool same_positions_added = now.sinusoidal() == before->sinusoidal();
  const bool same_rotation = now.rope() == before->rope() && (!now.rope() || now.positional == before->positional);
  set(Stage::XPos, now.sinusoidal() && before->sinusoidal() && now.qkv[0].input == before->qkv[0].input);
  set(Stage::XKvPos, now.sinusoidal() && before->sinusoidal() && now.qkv[1].input == before->qkv[1].input);
  for (int i = 0; i < 3; ++i) set(kProjected[i], same_positions_added && now.qkv[i] == before->qkv[i]);
  set(Stage::QRot, now.rope() && same_rotation && r[Stage::Q]);
  set(Stage::KRot, now.rope() && same_rotation && r[Stage::K]);
  r.mask = now.has_mask() && before->has_mask() && now.causal == before->causal &&
           now.key_padding == before->key_padding && now.custom == before->custom && now.window == before->window &&
           now.global_query == before->global_query;
  const bool same_masking = now.has_mask() ? r.mask && now.mask_fill == before->mask_fill : !before->has_mask();
  const bool same_dropout = now.dropout_active == before->dropout_active &&
                            (!now.dropout_active ||
                             (now.dropout_p == before->dropout_p && now.dropout_seed == before->dropout_seed));
  set(Stage::Scores, same_rotation && r[Stage::Q] && r[Stage::K]);
  set(Stage::Scaled, r[Stage::Scores] && now.scale == before->scale);
  set(Stage::Biased, now.alibi() && before->alibi() && r[Stage::Scaled]);
  const bool before_mask_reused = now.alibi() == before->alibi() && (now.alibi() ? r[Stage::Biased] : r[Stage::Scaled]);
  set(Stage::Masked, before_mask_reused && same_masking);
  set(Stage::Weights, r[Stage::Masked]);
  set(Stage::Dropped, r[Stage::Weights] && same_dropout);
  set(Stage::Context, r[Stage::Dropped] && r[Stage::V]);
  set(Stage::Concat, r[Stage::Context]);
  set(Stage::Output, r[Stage::Concat] && now.w_o == before->w_o && now.b_o == before->b_o);
  return r;
}

// Buffers of freed stages, handed to the next computation that needs a stage
// of exactly that many floats. A fresh 128 MiB stage costs tens of ms of page
// faults (a third of the time at L >= 1024); a recycled one is resident already,
// and its old values are all overwritten.
class StageRecycler {
 public:
  // Smaller buffers come from malloc's heap cheaply (L = 128's 512 KiB stages still
  // cost 1 ms of page faults: recycled, they cost nothing).
  static constexpr Index kMinFloats = Index{1} << 14;  // 64 KiB

  static StageRecycler& instance() {
    static auto* recycler = new StageRecycler;  // never destroyed: traces may be freed during exit
    return *recycler;
  }

  // Keeps only buffers of the given sizes (one each at most as many times as listed).
  void keep_only(std::vector<Index> sizes) {
    std::vector<FloatBuffer> dropped;  // freed outside the lock
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = free_.begin(); it != free_.end();) {
      auto wanted = std::find(sizes.begin(), sizes.end(), static_cast<Index>(it->size()));
      if (wanted != sizes.end()) {
        sizes.erase(wanted);
        ++it;
      } else {
        dropped.push_back(std::move(*it));
        it = free_.erase(it);
      }
    }
  }

  // A buffer of exactly `count` floats with unspecified values, or an empty one.
  FloatBuffer take(Index count) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (static_cast<Index>(it->size()) == count) {
        FloatBuffer buffer = std::move(*it);
        free_.erase(it);
        return buffer;
      }
    return {};
  }

  void give_back(FloatBuffer&& buffer) {
    if (static_cast<Index>(buffer.size()) < kMinFloats) return;
    std::lock_guard<std::mutex> lock(mutex_);
    // At most one trace's worth: a trace has at most kStageCount stages and as many head means.
    if (free_.size() < static_cast<size_t>(2 * kStageCount)) free_.push_back(std::move(buffer));
  }

  void clear() {
    std::vector<FloatBuffer> dropped;
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(free_);
  }

 private:
  std::mutex mutex_;
  std::vector<FloatBuffer> free_;
};

// A stage tensor whose buffer goes back to the recycler when the last trace holding it is freed.
// `fresh_pages`, if given, is set when its buffer is new, its pages not yet faulted in (not a recycled one).
std::shared_ptr<Tensor> recycled_stage(const std::vector<Index>& shape, bool* fresh_pages = nullptr) {
  const Index count = shape_product(shape);
  FloatBuffer buffer =
      count >= StageRecycler::kMinFloats ? StageRecycler::instance().take(count) : FloatBuffer{};
  const bool fresh = buffer.empty();
  if (fresh_pages) *fresh_pages = fresh;
  Tensor* tensor = fresh ? new Tensor(Tensor::for_overwrite(shape)) : new Tensor(shape, std::move(buffer));
  return std::shared_ptr<Tensor>(tensor, [](Tensor* t) {
    StageRecycler::instance().give_back(std::move(t->data));
    delete t;
  });
}

// Allocates the listed stages, touching none of their fresh pages (FloatBuffer): the kernels'
// threads fault them in as they write them, on both cores. Also the head means of
// `mean_shapes` (empty: none), recycled as the stages are: at L = 4096 the three (4096, 4096)
// means were 192 MiB of fresh pages at every trace.
void allocate_together(const std::vector<int>& which, const std::array<std::vector<Index>, kStageCount>& shapes,
                       const std::array<std::vector<Index>, kStageCount>& mean_shapes,
                       std::array<std::shared_ptr<Tensor>, kStageCount>& out,
                       std::array<bool, kStageCount>& fresh_pages,
                       std::array<std::shared_ptr<Tensor>, kStageCount>& means) {
  std::vector<Index> sizes;
  for (int i : which) sizes.push_back(shape_product(shapes[i]));
  for (const std::vector<Index>& shape : mean_shapes)
    if (!shape.empty()) sizes.push_back(shape_product(shape));
  StageRecycler::instance().keep_only(sizes);
  for (int i : which) out[i] = recycled_stage(shapes[i], &fresh_pages[i]);
  // New or recycled, summarize_stage writes a mean in row blocks on both threads.
  for (int i = 0; i < kStageCount; ++i)
    if (!mean_shapes[i].empty()) means[i] = recycled_stage(mean_shapes[i]);
}

// The reuse decide_reuse allows, given what `previous` holds and what this trace keeps
// (ComputeOptions::keep). A stage `previous` did not keep cannot be reused; the per-head
// pass is then run again whole, as it is when this trace drops a (B, h, Lq, Lk) stage
// and recomputes the context (a dropped stage exists only a block of rows at a time).
Reuse reuse_given_kept(Reuse reuse, const Trace* previous, const std::array<bool, kStageCount>& present,
                       const std::array<bool, kStageCount>& kept) {
  bool missing = false, dropping = false;
  for (Stage s : kSquareStages) {
    const int i = static_cast<int>(s);
    missing = missing || (reuse.stage[i] && kept[i] && !previous->stages[i]);
    dropping = dropping || (present[i] && !kept[i]);
  }
  if (missing || (dropping && !reuse[Stage::Context]))
    for (Stage s : kSquareStages) reuse.stage[static_cast<int>(s)] = false;
  return reuse;
}

Result<std::shared_ptr<Trace>> run(const Plan& plan, const ComputeOptions& options, const Reuse& allowed_reuse,
                                   const Plan* before, const Trace* previous) {
  const Dims& d = plan.dims;
  const detail::Progress progress{options.cancel, &options.progress};
  auto trace = std::make_shared<Trace>();
  trace->dims = d;
  trace->scale = plan.scale;
  trace->mask_fill = plan.mask_fill;

  // Every new stage is allocated here, before any computing, so an allocation
  // failure leaves nothing half done. Reused stages come from `previous`;
  // shared ones point at the (earlier) stage they equal.
  const std::vector<Index> per_head_q = {d.batch, d.heads, d.len_q, d.d_k};
  const std::vector<Index> per_head_kv = {d.batch, d.kv_heads, d.len_kv, d.d_k};
  const std::vector<Index> square = {d.batch, d.heads, d.len_q, d.len_kv};
  const std::vector<Index> model = {d.batch, d.len_q, d.d_model};
  const std::vector<Index> model_kv = {d.batch, d.len_kv, d.d_model};
  // Indexed by Stage: Q K V Scores Scaled Masked Weights Dropped Context Concat Output XPos XKvPos QRot KRot Biased
  const std::array<std::vector<Index>, kStageCount> shapes = {
      per_head_q, per_head_kv, per_head_kv, square, square, square,      square,     square,
      per_head_q, model,       model,       model,  model_kv, per_head_q, per_head_kv, square};
  const std::array<bool, kStageCount> present = detail::present_stages(plan);
  const std::array<bool, kStageCount> kept = detail::kept_stages(plan, options.keep);
  const std::array<std::optional<Stage>, kStageCount> equal_to = detail::shared_stages(plan);
  const Reuse reuse = previous ? reuse_given_kept(allowed_reuse, previous, present, kept) : allowed_reuse;

  std::array<std::shared_ptr<Tensor>, kStageCount> fresh;  // the stages this call computes and keeps
  std::array<bool, kStageCount> fresh_pages{};             // of those, the ones on new pages
  std::vector<int> to_allocate;
  for (int i = 0; i < kStageCount; ++i)
    if (kept[i] && !reuse.stage[i] && !equal_to[i]) to_allocate.push_back(i);
  // The head means this call summarizes anew, (B, R, C) of a per-head stage (B, h, R, C): not
  // for a stage that equals another (it shares that one's) or whose summary is reused.
  std::array<std::vector<Index>, kStageCount> mean_shapes;
  for (Stage s : kAllStages) {
    const int i = static_cast<int>(s);
    if (options.summarize && stage_is_per_head(s) && kept[i] && !equal_to[i] && !(reuse.stage[i] && previous->summaries[i]))
      mean_shapes[i] = {shapes[i][0], shapes[i][2], shapes[i][3]};
  }
  std::array<std::shared_ptr<Tensor>, kStageCount> means;
  allocate_together(to_allocate, shapes, mean_shapes, fresh, fresh_pages, means);
  // In computation order, so a shared stage finds the (earlier) stage it equals.
  for (Stage s : kAllStages) {
    const int i = static_cast<int>(s);
    if (!kept[i]) continue;
    trace->stages[i] = reuse.stage[i] ? previous->stages[i]
                       : equal_to[i]  ? trace->stages[static_cast<int>(*equal_to[i])]
                                      : TensorPtr(fresh[i]);
  }
  trace->alibi_slopes = plan.alibi_slopes;

  std::shared_ptr<Tensor> row_max, row_sum;
  if (reuse[Stage::Weights]) {
    trace->row_max = previous->row_max;
    trace->row_sum = previous->row_sum;
  } else {
    row_max = std::make_shared<Tensor>(std::vector<Index>{d.batch, d.heads, d.len_q});
    row_sum = std::make_shared<Tensor>(std::vector<Index>{d.batch, d.heads, d.len_q});
    trace->row_max = row_max;
    trace->row_sum = row_sum;
  }
  if (reuse.mask) {
    trace->mask = previous->mask;
    trace->fully_masked_rows = previous->fully_masked_rows;
  } else if (plan.has_mask()) {
    auto mask = make_tensor(detail::combined_mask(plan));
    trace->fully_masked_rows = detail::fully_masked_rows(*mask);
    trace->mask = std::move(mask);
  } else {
    trace->fully_masked_rows.assign(static_cast<size_t>(d.batch * d.len_q), 0);
  }

  auto out = [&](Stage s) { return fresh[static_cast<int>(s)].get(); };
  auto in = [&](Stage s) { return trace->has(s) ? trace->stage(s).data.data() : nullptr; };

  progress(0.0f);
  // Sinusoidal positions: the projections read x + PE (and x_kv + PE) instead of x.
  Plan projected = plan;
  if (plan.sinusoidal()) {
    if (out(Stage::XPos)) add_sinusoidal_positions(*plan.qkv[detail::kQ].input, *out(Stage::XPos));
    if (out(Stage::XKvPos)) add_sinusoidal_positions(*plan.qkv[detail::kK].input, *out(Stage::XKvPos));
    const TensorPtr kv_input = trace->has(Stage::XKvPos) ? trace->stage_ptr(Stage::XKvPos) : trace->stage_ptr(Stage::XPos);
    projected.qkv[detail::kQ].input = trace->stage_ptr(Stage::XPos);
    projected.qkv[detail::kK].input = projected.qkv[detail::kV].input = kv_input;
  }
  // Each pass also reports from the calling thread when it ends, so a progress
  // callback runs at every stage boundary whatever the threads did.
  // A new input with the old weights (an edit of X): its unchanged rows keep their projections.
  std::array<detail::PreviousProjection, 3> previous_rows;
  const bool same_sizes = before && detail::same_dims(plan.dims, before->dims) &&
                          plan.sinusoidal() == before->sinusoidal();
  for (int i = 0; i < 3 && same_sizes; ++i) {
    const detail::ProjectionSource &now = plan.qkv[i], &then = before->qkv[i];
    // What the previous projection read: x, or x + PE.
    const Tensor* then_input = !plan.sinusoidal()                           ? then.input.get()
                               : i != detail::kQ && previous->has(Stage::XKvPos) ? &previous->stage(Stage::XKvPos)
                                                                             : &previous->stage(Stage::XPos);
    if (!reuse.stage[i] && now.weight && now.weight == then.weight && now.bias == then.bias &&
        now.column == then.column && then_input && then_input->data.size() == projected.qkv[i].input->data.size())
      previous_rows[i] = {then_input, &previous->stage(kProjected[i])};
  }
  detail::project_heads(projected, {out(Stage::Q), out(Stage::K), out(Stage::V)}, progress, previous_rows);
  if (out(Stage::QRot)) rotate_by_position(trace->stage(Stage::Q), plan.positional, *out(Stage::QRot));
  if (out(Stage::KRot)) rotate_by_position(trace->stage(Stage::K), plan.positional, *out(Stage::KRot));
  progress(0.2f);
  if (progress.cancelled()) return cancelled();

  detail::HeadPass pass;
  pass.q = &trace->stage(trace->scored_q());
  pass.k = &trace->stage(trace->scored_k());
  pass.v = &trace->stage(Stage::V);
  pass.mask = trace->mask ? trace->mask->data.data() : nullptr;
  const Stage before_mask = plan.alibi() ? Stage::Biased : Stage::Scaled;
  const std::array<std::pair<detail::StageBuffers*, Stage>, 6> square_stages = {{
      {&pass.scores, Stage::Scores},
      {&pass.scaled, Stage::Scaled},
      {&pass.biased, before_mask},
      {&pass.masked, Stage::Masked},
      {&pass.weights, Stage::Weights},
      {&pass.dropped, Stage::Dropped},
  }};
  bool pass_computes = out(Stage::Context) != nullptr;
  for (auto& [buffers, s] : square_stages) {
    const int i = static_cast<int>(s);
    buffers->in = in(s);
    buffers->out = out(s) ? out(s)->data.data() : nullptr;
    buffers->fresh_pages = buffers->out && fresh_pages[i];
    pass_computes = pass_computes || buffers->out;
    if (!present[i] || kept[i]) continue;
    // Not kept: computed into a block of rows, or read from the block of the stage it equals.
    buffers->dropped = true;
    if (equal_to[i])
      for (int k = 0; k < 6; ++k)
        if (square_stages[static_cast<size_t>(k)].second == *equal_to[i]) buffers->same_as = k;
  }
  if (!plan.alibi()) {  // biased is scaled itself, written by the scaled pass
    pass.biased.out = nullptr;
    if (pass.biased.dropped) pass.biased.same_as = pass.scaled.dropped && pass.scaled.same_as >= 0 ? pass.scaled.same_as : 1;
  }
  pass.row_max = row_max ? row_max->data.data() : nullptr;
  pass.row_sum = row_sum ? row_sum->data.data() : nullptr;
  pass.context = out(Stage::Context) ? out(Stage::Context)->data.data() : nullptr;
  pass.concat = pass.context && out(Stage::Concat) ? out(Stage::Concat)->data.data() : nullptr;
  pass.fully_masked = trace->fully_masked_rows.data();
  pass.checks = &trace->checks;  // filled where the weights are computed; reused weights keep their checks
  if (reuse[Stage::Weights]) trace->checks = previous->checks;
  if (pass_computes) detail::run_heads(plan, pass, progress, 0.2f, 0.9f);
  progress(0.9f);
  if (progress.cancelled()) return cancelled();

  if (out(Stage::Concat) && !pass.concat) detail::concat_heads(d, trace->stage(Stage::Context), *out(Stage::Concat));
  if (out(Stage::Output)) detail::project_output(plan, trace->stage(Stage::Concat), *out(Stage::Output), progress);
  if (progress.cancelled()) return cancelled();

  if (options.summarize) {
    // A stage shown as another it equals (masked = scaled with no mask) shares that one's
    // summary, so that one is reduced to peaks for it: back to front, along chains of equals.
    StageSet peak_stages = options.peak_stages;
    for (auto s = kAllStages.rbegin(); s != kAllStages.rend(); ++s) {
      const int i = static_cast<int>(*s);
      if (peak_stages[i] && equal_to[i]) peak_stages.set(static_cast<size_t>(*equal_to[i]));
    }
    // Stages in order, so a shared stage finds the summary of the one it equals.
    for (Stage s : kAllStages) {
      const int i = static_cast<int>(s);
      if (means[i]) {
        const float* attend = s == Stage::Masked && trace->mask ? trace->mask->data.data() : nullptr;
        trace->summaries[i] =
            std::make_shared<const StageSummary>(detail::summarize_stage(trace->stage(s), attend, std::move(means[i]),
                                                                        peak_stages[i] ? options.peak_texels : 0));
      } else if (!stage_is_per_head(s) || !trace->has(s)) {
        continue;  // not per head, or not in this trace
      } else if (equal_to[i]) {
        trace->summaries[i] = trace->summaries[static_cast<int>(*equal_to[i])];
      } else {
        trace->summaries[i] = previous->summaries[i];  // reused with its stage
      }
      if (progress.cancelled()) return cancelled();
    }
  }
  progress(1.0f);

  trace->memory_bytes = detail::trace_memory(*trace);
  return trace;
}

}  // namespace

void release_recycled_stage_buffers() { StageRecycler::instance().clear(); }

void warm_up(const std::function<bool()>& session_loading) {
  // Large enough to run every pass on the thread team (above kParallelFlops), small enough
  // to take about a millisecond: 64 tokens of 128 numbers, 2 heads, every weight and bias.
  constexpr Index kTokens = 64, kModel = 128;
  auto filled = [](std::vector<Index> shape, float v) { return make_tensor(Tensor(std::move(shape), v)); };
  Session s;
  s.config.d_model = kModel;
  s.config.num_heads = 2;
  s.x = filled({1, kTokens, kModel}, 0.5f);
  for (TensorPtr* w : {&s.weights.w_q, &s.weights.w_k, &s.weights.w_v, &s.weights.w_o}) *w = filled({kModel, kModel}, 0.01f);
  for (TensorPtr* b : {&s.weights.b_q, &s.weights.b_k, &s.weights.b_v, &s.weights.b_o}) *b = filled({kModel}, 0.0f);
  ComputeOptions options;
  options.summarize = true;
  (void)compute(s, options);
  // While the session loads, grow the heap by a block and fault its pages in a chunk at a time,
  // then free it: with the heap keeping what is freed (base/heap_policy.hpp), the first trace's
  // packed weights and stages land on pages faulted in while the learner waited for the file anyway.
  keep_freed_memory_in_heap();
  constexpr Index kBlockFloats = kWarmHeapBytes / sizeof(float), kChunkFloats = Index{64} << 10;
  const std::unique_ptr<float[]> block(new float[kBlockFloats]);
  for (Index at = 0; at < kBlockFloats && session_loading(); at += kChunkFloats)
    if (!fault_in_for_writing(block.get() + at, kChunkFloats)) std::fill_n(block.get() + at, kChunkFloats, 0.0f);
}

Result<std::shared_ptr<const Trace>> compute(const Session& session, const ComputeOptions& options,
                                             const Session* previous_session, std::shared_ptr<const Trace> previous) {
  const auto start = std::chrono::steady_clock::now();
  auto plan = detail::make_plan(session);
  if (!plan) return plan.error();
  // Wakes the second core's thread now, while this one plans and allocates, and keeps it
  // awake between the passes.
  const TeamScope team(detail::multiply_adds(plan->dims) > kParallelFlops);

  auto bytes = detail::trace_bytes(*plan, options.keep);
  if (!bytes) return bytes.error();
  const Index limit = options.memory_limit_bytes > 0 ? options.memory_limit_bytes : default_memory_limit();
  if (*bytes > limit) {
    // What keeping one view's stage would take instead (ComputeOptions::keep).
    const auto weights_bytes = detail::trace_bytes(*plan, stage_set({Stage::Weights}));
    const Index weights_only = weights_bytes ? *weights_bytes : *bytes;
    return make_error(ErrorCode::TooLarge,
                      "this session's trace would need " + detail::human_bytes(*bytes) +
                          ", more than the memory limit of " + detail::human_bytes(limit) +
                          "; make the sequences shorter, the batch smaller or use fewer heads, or keep only the "
                          "stages one view shows (the attention weights alone: " +
                          detail::human_bytes(weights_only) + ")",
                      {{"bytes", std::to_string(*bytes)},
                       {"limit", std::to_string(limit)},
                       {"weights_only_bytes", std::to_string(weights_only)}});
  }
  if (options.cancel && options.cancel->load()) return cancelled();

  // The previous trace helps only if it was computed from a valid session of the same sizes.
  std::optional<Plan> before;
  if (previous_session && previous) {
    auto p = detail::make_plan(*previous_session);
    if (p && detail::same_dims(p->dims, previous->dims)) before = std::move(*p);
  }
  const Reuse reuse = decide_reuse(*plan, before ? &*before : nullptr);

  try {
    auto trace = run(*plan, options, reuse, before ? &*before : nullptr, previous.get());
    if (!trace) return trace.error();
    trace.value()->compute_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return std::shared_ptr<const Trace>(std::move(trace.value()));
  } catch (const std::bad_alloc&) {
    return make_error(ErrorCode::TooLarge,
                      "the machine could not provide the " + detail::human_bytes(*bytes) +
                          " this session's trace needs; make the sequences shorter or the batch smaller",
                      {{"bytes", std::to_string(*bytes)}, {"limit", std::to_string(limit)}});
  }
}

}  // namespace al
