# cmake --install: the program, its desktop entry, AppStream metadata, icons, MIME type
# and man page, laid out as the freedesktop specifications expect under the prefix.
include(GNUInstallDirs)
set(ATTENTION_LAB_APP_ID io.github.attentionlab.AttentionLab)
# The date of the release named by project(VERSION), for AppStream and the man page.
set(ATTENTION_LAB_RELEASE_DATE 2026-11-23)
set(desktop_dir ${PROJECT_SOURCE_DIR}/assets/desktop)

install(TARGETS attention-lab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The installed binary reads these from <prefix>/share/attention-lab (app/gui/assets.cpp)
# and has compiled-in copies too; installing them lets a teacher edit a translation.
if(ATTENTION_LAB_BUILD_GUI)
  set(data_dir ${CMAKE_INSTALL_DATADIR}/attention-lab)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/assets/i18n DESTINATION ${data_dir}/assets FILES_MATCHING PATTERN "*.json")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/assets/icons DESTINATION ${data_dir}/assets FILES_MATCHING PATTERN "*.png")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/shaders/ DESTINATION ${data_dir}/shaders
          FILES_MATCHING PATTERN "*.vert" PATTERN "*.frag")

  install(FILES ${desktop_dir}/${ATTENTION_LAB_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${desktop_dir}/${ATTENTION_LAB_APP_ID}.mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
          RENAME ${ATTENTION_LAB_APP_ID}.xml)
  configure_file(${desktop_dir}/${ATTENTION_LAB_APP_ID}.metainfo.xml.in
                 ${PROJECT_BINARY_DIR}/${ATTENTION_LAB_APP_ID}.metainfo.xml @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${ATTENTION_LAB_APP_ID}.metainfo.xml
          DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  foreach(size 16 32 48 64 128 256)
    install(FILES ${PROJECT_SOURCE_DIR}/assets/icons/attention-lab-${size}.png
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps
            RENAME ${ATTENTION_LAB_APP_ID}.png)
  endforeach()
  install(FILES ${PROJECT_SOURCE_DIR}/assets/icons/attention-lab.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps RENAME ${ATTENTION_LAB_APP_ID}.svg)
endif()

# The man page is made from the built binary's --help each time the binary changes, and
# installed compressed as Debian policy asks (gzip -9n: no name or time stamp, so the same
# page gives the same bytes).
find_program(GZIP gzip REQUIRED)
set(man_page ${PROJECT_BINARY_DIR}/man/attention-lab.1)
add_custom_command(
  OUTPUT ${man_page}.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
  COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:attention-lab> -DOUT=${man_page}
          -DDATE=${ATTENTION_LAB_RELEASE_DATE}
          -P ${PROJECT_SOURCE_DIR}/cmake/make_man_page.cmake
  COMMAND ${GZIP} -9nkf ${man_page}
  DEPENDS attention-lab ${PROJECT_SOURCE_DIR}/cmake/make_man_page.cmake
  COMMENT "Writing the man page from attention-lab --help")
add_custom_target(man_page ALL DEPENDS ${man_page}.gz)
install(FILES ${man_page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
