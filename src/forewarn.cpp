// SPDX-License-Identifier: MIT
// libforewarn, the compiled mode (CMake option FOREWARN_COMPILED_LIB, docs/building.md): the
// default instantiations, compiled once here. A user's translation unit declares exactly these
// `extern template` (detail/extern_templates.hpp) and links this library instead of compiling
// them itself. Header-only builds never compile this file.
#ifndef FOREWARN_BUILDING_LIB
#error "src/forewarn.cpp is libforewarn's only source: build it through CMake (FOREWARN_COMPILED_LIB=ON)"
#endif

#include <forewarn/forewarn.hpp>
// The JSON helpers the headers outside the umbrella (the state file, the fleet budget, the
// emulator) share with it: included by name so that the library holds them whatever the
// umbrella's headers include.
#include <forewarn/detail/event_json.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/platform/files.hpp>  // outside the umbrella: the state file's, the agent's
#include <forewarn/aws/autoscaling.hpp>   // by name, whatever the umbrella reaches: Auto Scaling, SigV4, SHA-256
#include <forewarn/transport/stream.hpp>  // outside the umbrella: the streaming transport (etcd's watch)

FOREWARN_BEGIN_NAMESPACE

template class FOREWARN_API detail::client_base<azure::basic_scheduled_events_client<default_transport>, default_transport, azure::instance_identity, cloud::azure, azure::client_options>;
template class FOREWARN_API azure::basic_scheduled_events_client<default_transport>;
template class FOREWARN_API detail::client_base<gce::basic_metadata_client<default_transport>, default_transport, gce::instance_identity, cloud::gce, gce::client_options>;
template class FOREWARN_API gce::basic_metadata_client<default_transport>;
template class FOREWARN_API detail::client_base<aws::basic_instance_metadata_client<default_transport>, default_transport, aws::instance_identity, cloud::aws, aws::client_options>;
template class FOREWARN_API aws::basic_instance_metadata_client<default_transport>;

template class FOREWARN_API detail::client_base<alibaba::basic_metadata_client<default_transport>, default_transport, alibaba::instance_identity, cloud::alibaba, alibaba::client_options>;
template class FOREWARN_API detail::spot_notice_client<alibaba::basic_metadata_client<default_transport>, default_transport, alibaba::instance_identity, cloud::alibaba, alibaba::client_options>;
template class FOREWARN_API alibaba::basic_metadata_client<default_transport>;
template class FOREWARN_API detail::client_base<tencent::basic_metadata_client<default_transport>, default_transport, tencent::instance_identity, cloud::tencent, tencent::client_options>;
template class FOREWARN_API detail::spot_notice_client<tencent::basic_metadata_client<default_transport>, default_transport, tencent::instance_identity, cloud::tencent, tencent::client_options>;
template class FOREWARN_API tencent::basic_metadata_client<default_transport>;

template class FOREWARN_API basic_poller<azure::basic_scheduled_events_client<default_transport>>;
template class FOREWARN_API basic_poller<gce::basic_metadata_client<default_transport>>;
template class FOREWARN_API basic_poller<aws::basic_instance_metadata_client<default_transport>>;
template class FOREWARN_API basic_poller<alibaba::basic_metadata_client<default_transport>>;
template class FOREWARN_API basic_poller<tencent::basic_metadata_client<default_transport>>;

// The poller's parts' maps by id (detail/hidden.hpp): a program's copies and destructors of a
// change_tracker, an approval_policy or a pause_meter call these, never seeing the maps' type.
template class detail::hidden<change_tracker::evidence_map>;
template class detail::hidden<approval_policy::entry_map>;
template class detail::hidden<pause_meter::record_map>;

FOREWARN_END_NAMESPACE
