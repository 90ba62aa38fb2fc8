find_package(PkgConfig)

PKG_CHECK_MODULES(PC_GR_HFSTACK gnuradio-hfstack)

FIND_PATH(
    GR_HFSTACK_INCLUDE_DIRS
    NAMES gnuradio/hfstack/api.h
    HINTS $ENV{HFSTACK_DIR}/include
        ${PC_HFSTACK_INCLUDEDIR}
    PATHS ${CMAKE_INSTALL_PREFIX}/include
          /usr/local/include
          /usr/include
)

FIND_LIBRARY(
    GR_HFSTACK_LIBRARIES
    NAMES gnuradio-hfstack
    HINTS $ENV{HFSTACK_DIR}/lib
        ${PC_HFSTACK_LIBDIR}
    PATHS ${CMAKE_INSTALL_PREFIX}/lib
          ${CMAKE_INSTALL_PREFIX}/lib64
          /usr/local/lib
          /usr/local/lib64
          /usr/lib
          /usr/lib64
          )

include("${CMAKE_CURRENT_LIST_DIR}/gnuradio-hfstackTarget.cmake")

INCLUDE(FindPackageHandleStandardArgs)
FIND_PACKAGE_HANDLE_STANDARD_ARGS(GR_HFSTACK DEFAULT_MSG GR_HFSTACK_LIBRARIES GR_HFSTACK_INCLUDE_DIRS)
MARK_AS_ADVANCED(GR_HFSTACK_LIBRARIES GR_HFSTACK_INCLUDE_DIRS)
