// SPDX-License-Identifier: MIT
// The fleet budget's transport to etcd (platform/etcd_transport.hpp).
#include "etcd_transport.hpp"

namespace watch {

forewarn::result<forewarn::default_transport> etcd_transport(const std::string& ca, const std::string& cert,
                                                             const std::string& key) {
#if defined(_WIN32)
    if (!ca.empty() || !cert.empty() || !key.empty())
        return forewarn::error(forewarn::errc::invalid_argument,
                               "--etcd-ca, --etcd-cert and --etcd-key are not supported on Windows yet: WinHTTP "
                               "checks etcd's certificate against the system store");
    return forewarn::default_transport();
#else
    forewarn::curl_transport_options t;
    t.ca_file = ca;
    t.client_cert = cert;
    t.client_key = key;
    return forewarn::curl_transport(t);
#endif
}

}  // namespace watch
