// SPDX-License-Identifier: MIT
// The transport forewarn-watch's fleet budget talks to etcd over, with --etcd-ca, --etcd-cert and
// --etcd-key: libcurl's TLS options on POSIX. WinHTTP on Windows checks the server against the
// system's certificate store and takes no client certificate from a file: those flags are
// refused there with a clear error instead of being ignored.
#pragma once

#include <forewarn/transport/default.hpp>
#include <forewarn/result.hpp>

#include <string>

namespace watch {

forewarn::result<forewarn::default_transport> etcd_transport(const std::string& ca, const std::string& cert,
                                                             const std::string& key);

}  // namespace watch
