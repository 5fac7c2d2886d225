// Installation paths compiled into the binary (packaging/CMakeLists.txt).
#pragma once

namespace rowprobe {

/// The installed plugin directory, CMAKE_INSTALL_FULL_LIBDIR/rowprobe (on Debian
/// /usr/lib/<multiarch>/rowprobe): row policy libraries (librowprobe-policy-NAME.so) and other
/// plugin shared objects. Searched after `policy-dir` and $ROWPROBE_POLICY_PATH.
const char* defaultPluginDir() noexcept;

}  // namespace rowprobe
