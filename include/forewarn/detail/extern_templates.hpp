// SPDX-License-Identifier: MIT
// No include guard on purpose: poller.hpp, each transport header and each client header include this
// file last, and each inclusion declares the default instantiations whose templates are all
// defined by then, once each, whatever order a user includes the headers in.
//
// In compiled mode (FOREWARN_COMPILED_LIB, docs/building.md) libforewarn holds these
// instantiations (src/forewarn.cpp) and a user's translation unit only declares them: it
// compiles none of the clients' or the pollers' member functions again. Header-only (the
// default), this file declares nothing.

#include <forewarn/config.hpp>

#if FOREWARN_EXTERN_TEMPLATES

// The default transport's header is in: WinHTTP's on Windows, libcurl's elsewhere (fwd.hpp).
#if !defined(FOREWARN_DEFAULT_TRANSPORT_DEFINED) && \
    ((defined(_WIN32) && defined(FOREWARN_WINHTTP_TRANSPORT_DEFINED)) || \
     (!defined(_WIN32) && defined(FOREWARN_CURL_TRANSPORT_DEFINED)))
#define FOREWARN_DEFAULT_TRANSPORT_DEFINED
#endif

#if defined(FOREWARN_DEFAULT_TRANSPORT_DEFINED) && defined(FOREWARN_AZURE_CLIENT_DEFINED) && \
    !defined(FOREWARN_EXTERN_AZURE_CLIENT)
#define FOREWARN_EXTERN_AZURE_CLIENT
FOREWARN_BEGIN_NAMESPACE
extern template class FOREWARN_API detail::client_base<azure::basic_scheduled_events_client<default_transport>, default_transport, azure::instance_identity, cloud::azure, azure::client_options>;
extern template class FOREWARN_API azure::basic_scheduled_events_client<default_transport>;
FOREWARN_END_NAMESPACE
#endif

#if defined(FOREWARN_DEFAULT_TRANSPORT_DEFINED) && defined(FOREWARN_GCE_CLIENT_DEFINED) && \
    !defined(FOREWARN_EXTERN_GCE_CLIENT)
#define FOREWARN_EXTERN_GCE_CLIENT
FOREWARN_BEGIN_NAMESPACE
extern template class FOREWARN_API detail::client_base<gce::basic_metadata_client<default_transport>, default_transport, gce::instance_identity, cloud::gce, gce::client_options>;
extern template class FOREWARN_API gce::basic_metadata_client<default_transport>;
FOREWARN_END_NAMESPACE
#endif

#if defined(FOREWARN_DEFAULT_TRANSPORT_DEFINED) && defined(FOREWARN_AWS_CLIENT_DEFINED) && \
    !defined(FOREWARN_EXTERN_AWS_CLIENT)
#define FOREWARN_EXTERN_AWS_CLIENT
FOREWARN_BEGIN_NAMESPACE
extern template class FOREWARN_API detail::client_base<aws::basic_instance_metadata_client<default_transport>, default_transport, aws::instance_identity, cloud::aws, aws::client_options>;
extern template class FOREWARN_API aws::basic_instance_metadata_client<default_transport>;
FOREWARN_END_NAMESPACE
#endif

#if defined(FOREWARN_DEFAULT_TRANSPORT_DEFINED) && defined(FOREWARN_ALIBABA_CLIENT_DEFINED) && \
    !defined(FOREWARN_EXTERN_ALIBABA_CLIENT)
#define FOREWARN_EXTERN_ALIBABA_CLIENT
FOREWARN_BEGIN_NAMESPACE
extern template class FOREWARN_API detail::client_base<alibaba::basic_metadata_client<default_transport>, default_transport, alibaba::instance_identity, cloud::alibaba, alibaba::client_options>;
extern template class FOREWARN_API detail::spot_notice_client<alibaba::basic_metadata_client<default_transport>, default_transport, alibaba::instance_identity, cloud::alibaba, alibaba::client_options>;
extern template class FOREWARN_API alibaba::basic_metadata_client<default_transport>;
FOREWARN_END_NAMESPACE
#endif

#if defined(FOREWARN_DEFAULT_TRANSPORT_DEFINED) && defined(FOREWARN_TENCENT_CLIENT_DEFINED) && \
    !defined(FOREWARN_EXTERN_TENCENT_CLIENT)
#define FOREWARN_EXTERN_TENCENT_CLIENT
FOREWARN_BEGIN_NAMESPACE
extern template class FOREWARN_API detail::client_base<tencent::basic_metadata_client<default_transport>, default_transport, tencent::instance_identity, cloud::tencent, tencent::client_options>;
extern template class FOREWARN_API detail::spot_notice_client<tencent::basic_metadata_client<default_transport>, default_transport, tencent::instance_identity, cloud::tencent, tencent::client_options>;
extern template class FOREWARN_API tencent::basic_metadata_client<default_transport>;
FOREWARN_END_NAMESPACE
#endif

#if defined(FOREWARN_POLLER_DEFINED) && defined(FOREWARN_EXTERN_AZURE_CLIENT) && !defined(FOREWARN_EXTERN_AZURE_POLLER)
#define FOREWARN_EXTERN_AZURE_POLLER
FOREWARN_BEGIN_NAMESPACE
extern template class FOREWARN_API basic_poller<azure::basic_scheduled_events_client<default_transport>>;
FOREWARN_END_NAMESPACE
#endif

#if defined(FOREWARN_POLLER_DEFINED) && defined(FOREWARN_EXTERN_GCE_CLIENT) && !defined(FOREWARN_EXTERN_GCE_POLLER)
#define FOREWARN_EXTERN_GCE_POLLER
FOREWARN_BEGIN_NAMESPACE
extern template class FOREWARN_API basic_poller<gce::basic_metadata_client<default_transport>>;
FOREWARN_END_NAMESPACE
#endif

#if defined(FOREWARN_POLLER_DEFINED) && defined(FOREWARN_EXTERN_AWS_CLIENT) && !defined(FOREWARN_EXTERN_AWS_POLLER)
#define FOREWARN_EXTERN_AWS_POLLER
FOREWARN_BEGIN_NAMESPACE
extern template class FOREWARN_API basic_poller<aws::basic_instance_metadata_client<default_transport>>;
FOREWARN_END_NAMESPACE
#endif

#if defined(FOREWARN_POLLER_DEFINED) && defined(FOREWARN_EXTERN_ALIBABA_CLIENT) && !defined(FOREWARN_EXTERN_ALIBABA_POLLER)
#define FOREWARN_EXTERN_ALIBABA_POLLER
FOREWARN_BEGIN_NAMESPACE
extern template class FOREWARN_API basic_poller<alibaba::basic_metadata_client<default_transport>>;
FOREWARN_END_NAMESPACE
#endif

#if defined(FOREWARN_POLLER_DEFINED) && defined(FOREWARN_EXTERN_TENCENT_CLIENT) && !defined(FOREWARN_EXTERN_TENCENT_POLLER)
#define FOREWARN_EXTERN_TENCENT_POLLER
FOREWARN_BEGIN_NAMESPACE
extern template class FOREWARN_API basic_poller<tencent::basic_metadata_client<default_transport>>;
FOREWARN_END_NAMESPACE
#endif

#endif  // FOREWARN_EXTERN_TEMPLATES
