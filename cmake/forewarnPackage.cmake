# SPDX-License-Identifier: MIT
# The packages operators install (docs/building.md, "Packages"): with FOREWARN_PACKAGE on, CPack
# makes
#   Linux:   forewarn-watch, forewarn-emulator and libforewarn-dev as Debian packages (DEB), one per
#            install component (watch, emulator, dev), with what Debian wants of each: a copyright
#            file and a changelog under /usr/share/doc/<package>, dependencies from the binaries
#            (dpkg-shlibdeps), /etc/default/forewarn-watch as a conffile and the maintainer scripts
#            of packaging/debian;
#   Windows: forewarn-watch-<version>-win64.zip (ZIP): forewarn-watch.exe, README.txt (the service
#            install line), windows.md and LICENSE.txt.
# ./quickstart package and ./quickstart package-windows drive it through the "package" and
# "package-windows" presets: `cpack -G DEB` / `cpack -G ZIP` in that build tree.
include_guard(GLOBAL)
include(GNUInstallDirs)

set(_pkg_src "${PROJECT_SOURCE_DIR}/packaging")
set(_pkg_gen "${PROJECT_BINARY_DIR}/packaging")

# The package version is the project's; --version prints config.hpp's, and the Debian changelog's
# latest entry names one too: the three must be one.
string(REPLACE "." "\\." _pkg_version_re "${PROJECT_VERSION}")
file(STRINGS "${PROJECT_SOURCE_DIR}/include/forewarn/config.hpp" _pkg_version_line
  REGEX "^#define FOREWARN_VERSION_STRING ")
if(NOT _pkg_version_line MATCHES "\"${_pkg_version_re}\"$")
  message(FATAL_ERROR "include/forewarn/config.hpp says ${_pkg_version_line}, CMakeLists.txt says ${PROJECT_VERSION}: "
                      "the programs' --version and the packages' version must agree")
endif()
file(STRINGS "${_pkg_src}/debian/changelog" _pkg_changelog_head LIMIT_COUNT 1)
if(NOT _pkg_changelog_head MATCHES "^forewarn \\(${_pkg_version_re}\\) ")
  message(FATAL_ERROR "packaging/debian/changelog's latest entry is \"${_pkg_changelog_head}\", not version "
                      "${PROJECT_VERSION}: add an entry for it")
endif()
# The changelog's date is the packages' time (the manual pages' date): they build the same twice.
file(STRINGS "${_pkg_src}/debian/changelog" _pkg_changelog_trailer REGEX "^ -- " LIMIT_COUNT 1)
string(REGEX REPLACE "^.*>  " "" _pkg_changelog_date "${_pkg_changelog_trailer}")
execute_process(COMMAND date -d "${_pkg_changelog_date}" +%s OUTPUT_VARIABLE FOREWARN_SOURCE_DATE_EPOCH
  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _pkg_rc)
if(NOT _pkg_rc EQUAL 0 OR NOT FOREWARN_SOURCE_DATE_EPOCH MATCHES "^[0-9]+$")
  message(FATAL_ERROR "packaging/debian/changelog: cannot read the date of \"${_pkg_changelog_trailer}\"")
endif()

set(CPACK_PACKAGE_NAME forewarn)
set(CPACK_PACKAGE_VENDOR "the forewarn authors")
set(CPACK_PACKAGE_CONTACT "forewarn developers <forewarn@users.noreply.github.com>")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_HOMEPAGE_URL "${PROJECT_HOMEPAGE_URL}")
set(CPACK_PACKAGE_DIRECTORY "${PROJECT_BINARY_DIR}/packages")
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
  OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

if(WIN32)
  # --- the Windows zip: the agent alone ------------------------------------------------------
  set(CPACK_GENERATOR ZIP)
  set(CPACK_ARCHIVE_COMPONENT_INSTALL ON)
  set(CPACK_COMPONENTS_ALL watch)
  set(CPACK_ARCHIVE_WATCH_FILE_NAME "forewarn-watch-${PROJECT_VERSION}-win64")
  set(CPACK_PACKAGE_FILE_NAME "${CPACK_ARCHIVE_WATCH_FILE_NAME}")  # the folder inside it
  set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
  set(CPACK_COMPONENT_INCLUDE_TOPLEVEL_DIRECTORY ON)  # the zip holds forewarn-watch-<version>-win64/
  set(FOREWARN_VERSION "${PROJECT_VERSION}")
  configure_file("${_pkg_src}/windows/README.txt" "${_pkg_gen}/README.txt" @ONLY NEWLINE_STYLE CRLF)
  configure_file("${PROJECT_SOURCE_DIR}/LICENSE" "${_pkg_gen}/LICENSE.txt" COPYONLY)
  install(FILES "${_pkg_gen}/README.txt" "${_pkg_gen}/LICENSE.txt" "${PROJECT_SOURCE_DIR}/docs/windows.md"
    DESTINATION . COMPONENT watch)
else()
  # --- Debian packages -----------------------------------------------------------------------
  set(CPACK_GENERATOR DEB)
  set(CPACK_DEB_COMPONENT_INSTALL ON)
  # A package for each program this build makes, and the library's.
  set(CPACK_COMPONENTS_ALL dev)
  if(TARGET forewarn-watch)
    list(APPEND CPACK_COMPONENTS_ALL watch)
  endif()
  if(TARGET forewarn-emulator)
    list(APPEND CPACK_COMPONENTS_ALL emulator)
  endif()
  set(CPACK_DEBIAN_PACKAGE_SOURCE forewarn)
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  # DESTDIR staging: the unit's ExecStart= names /usr/bin/forewarn-watch (not the staging
  # directory), and /etc/default/forewarn-watch lands in /etc.
  set(CPACK_SET_DESTDIR ON)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_VERSION "${PROJECT_VERSION}")  # native: no Debian revision of its own
  set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
  set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
  set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
  set(CPACK_DEBIAN_COMPRESSION_TYPE xz)

  set(CPACK_DEBIAN_WATCH_PACKAGE_NAME forewarn-watch)
  set(CPACK_DEBIAN_WATCH_PACKAGE_SECTION admin)
  set(CPACK_DEBIAN_WATCH_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_WATCH_PACKAGE_CONTROL_EXTRA
    "${_pkg_gen}/watch/conffiles" "${_pkg_gen}/watch/postinst" "${_pkg_gen}/watch/prerm" "${_pkg_gen}/watch/postrm")
  set(CPACK_COMPONENT_WATCH_DESCRIPTION "maintenance notices of cloud VMs, with hooks and approvals
forewarn-watch runs on each VM of Azure, Google Compute Engine, AWS EC2,
Alibaba Cloud ECS or Tencent Cloud CVM and watches the instance metadata for
host maintenance: Azure Scheduled Events, GCE maintenance events and upcoming
maintenance windows, AWS scheduled events, Spot interruptions, rebalance
recommendations and Auto Scaling scale-ins, and Alibaba's and Tencent's Spot
reclaim notices. It prints one line per change (JSON on request), runs the
operator's commands before and after an event, approves the event once its
prepare command succeeded where the cloud takes approvals (Azure
StartRequests, GCE performMaintenance, AWS CompleteLifecycleAction with a
lifecycle hook), and serves Prometheus metrics, /healthz and /readyz. With
--kubernetes it taints, cordons and drains its node. A fleet budget on etcd
keeps at most N VMs of a group in maintenance at once.
.
The systemd unit is installed but neither enabled nor started: set
/etc/default/forewarn-watch, then systemctl enable --now forewarn-watch.")

  set(CPACK_DEBIAN_EMULATOR_PACKAGE_NAME forewarn-emulator)
  set(CPACK_DEBIAN_EMULATOR_PACKAGE_SECTION devel)
  set(CPACK_DEBIAN_EMULATOR_PACKAGE_SHLIBDEPS ON)
  set(CPACK_COMPONENT_EMULATOR_DESCRIPTION "emulator of the Azure, GCE, AWS, Alibaba and Tencent instance metadata services
forewarn-emulator serves Azure Scheduled Events, the Google Compute Engine
metadata server, AWS EC2 instance metadata (IMDSv2) and the Alibaba Cloud and
Tencent Cloud metadata services over HTTP, playing maintenance scenarios from
a file or its control API, with faults, so that maintenance handling can be
tested without a cloud VM.")

  set(CPACK_DEBIAN_DEV_PACKAGE_NAME libforewarn-dev)
  set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
  set(CPACK_DEBIAN_DEV_PACKAGE_ARCHITECTURE all)  # header-only
  set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libcurl4-openssl-dev | libcurl-dev, rapidjson-dev")
  set(CPACK_COMPONENT_DEV_DESCRIPTION "C++17 library for cloud VM maintenance notices (headers)
forewarn lets a service on a cloud VM hear about host maintenance before it
happens, prepare for it, approve it and recover after it. It speaks the
Azure Instance Metadata Service's Scheduled Events API, the Google Compute
Engine metadata server, AWS EC2's instance metadata (IMDSv2) and the Alibaba
Cloud and Tencent Cloud metadata services, approves through Azure's
StartRequests, GCE's performMaintenance and AWS Auto Scaling's
CompleteLifecycleAction, and includes an in-process emulator of all five for
tests.
.
This package holds the header-only library, its CMake package
(find_package(forewarn)) and its pkg-config file.")

  # The maintainer scripts and conffiles, from packaging/debian (the control archive wants them
  # under their bare names).
  foreach(_pkg_file IN ITEMS conffiles postinst prerm postrm)
    configure_file("${_pkg_src}/debian/forewarn-watch.${_pkg_file}" "${_pkg_gen}/watch/${_pkg_file}" COPYONLY)
  endforeach()
  # Each package's /usr/share/doc/<package>: copyright, and the changelog compressed as Debian
  # wants it (gzip -9n: no name, no time stamp, so the package is reproducible). A native package
  # (no Debian revision) calls it changelog.gz.
  set(_pkg_changelog_gz "${_pkg_gen}/changelog.gz")
  execute_process(COMMAND gzip -9nc INPUT_FILE "${_pkg_src}/debian/changelog" OUTPUT_FILE "${_pkg_changelog_gz}"
    RESULT_VARIABLE _pkg_rc)
  if(NOT _pkg_rc EQUAL 0)
    message(FATAL_ERROR "FOREWARN_PACKAGE: gzip failed on packaging/debian/changelog (${_pkg_rc})")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pkg_src}/debian/changelog")
  foreach(_pkg IN ITEMS watch:forewarn-watch emulator:forewarn-emulator dev:libforewarn-dev)
    string(REPLACE ":" ";" _pkg "${_pkg}")
    list(GET _pkg 0 _pkg_component)
    list(GET _pkg 1 _pkg_name)
    install(FILES "${_pkg_src}/debian/copyright" "${_pkg_changelog_gz}"
      DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/${_pkg_name}" COMPONENT ${_pkg_component})
  endforeach()
  # Manual pages from the programs' own --help and --version (help2man), so they cannot disagree.
  find_program(FOREWARN_HELP2MAN help2man)
  if(NOT FOREWARN_HELP2MAN)
    message(FATAL_ERROR "FOREWARN_PACKAGE: the manual pages need help2man (Debian: apt-get install help2man)")
  endif()
  foreach(_pkg IN ITEMS "watch:forewarn-watch:maintenance notices of cloud VMs, with hooks and approvals"
                        "emulator:forewarn-emulator:emulator of the Azure, GCE, AWS, Alibaba and Tencent instance metadata services")
    string(REPLACE ":" ";" _pkg "${_pkg}")
    list(GET _pkg 0 _pkg_component)
    list(GET _pkg 1 _pkg_program)
    list(GET _pkg 2 _pkg_summary)
    if(NOT TARGET ${_pkg_program})
      continue()
    endif()
    set(_pkg_man "${_pkg_gen}/man/${_pkg_program}.1")
    add_custom_command(OUTPUT "${_pkg_man}.gz"
      COMMAND "${CMAKE_COMMAND}" -E env "SOURCE_DATE_EPOCH=${FOREWARN_SOURCE_DATE_EPOCH}"
              "${FOREWARN_HELP2MAN}" --no-info --section 1 --name "${_pkg_summary}" --output "${_pkg_man}"
              "$<TARGET_FILE:${_pkg_program}>"
      COMMAND gzip -9nf "${_pkg_man}"
      DEPENDS ${_pkg_program} VERBATIM)
    add_custom_target(${_pkg_program}_man ALL DEPENDS "${_pkg_man}.gz")
    install(FILES "${_pkg_man}.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1" COMPONENT ${_pkg_component})
  endforeach()
  install(FILES "${_pkg_src}/debian/forewarn-watch.default" DESTINATION "${CMAKE_INSTALL_FULL_SYSCONFDIR}/default"
    RENAME forewarn-watch COMPONENT watch)
endif()

include(CPack)
unset(_pkg_src)
unset(_pkg_gen)
