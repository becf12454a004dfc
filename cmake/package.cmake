# cpack -G DEB: a Debian package of what cmake/install.cmake installs, under /usr.
# tools/make_deb.sh builds it. Shared-library dependencies are computed by dpkg-shlibdeps;
# Debian's own triggers refresh the menu, icon and MIME caches, so no maintainer scripts.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attention-lab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Attention Lab authors <attention-lab@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "watch self-attention computed step by step")
set(CPACK_PACKAGE_DESCRIPTION
    "Attention Lab is a desktop app in which a learner watches softmax(QK^T/sqrt(d_k))V computed
one stage at a time on numbers they can edit: projections, scores, scaling, mask, softmax,
dropout, heads and output, each as heatmaps, with every cell explained term by term.
It has labs on masking, numerical stability, flash and linear attention, a guided tour
and quizzes, in English and Simplified Chinese.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE https://github.com/attentionlab/attention-lab)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libepoxy opens libGL at run time, which dpkg-shlibdeps cannot see.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libgl1")
# The Chinese interface needs a CJK font; Mesa's drivers draw the window.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fonts-noto-cjk, libgl1-mesa-dri")
include(CPack)
