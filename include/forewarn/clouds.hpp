// SPDX-License-Identifier: MIT
#pragma once

// The clouds forewarn knows, in order of preference (detect_cloud() takes the first that answers):
// the one list that detect_cloud(), forewarn-watch and its `check` loop over. A new cloud adds
// its `facts` here (docs/architecture.md, "A new cloud").

#include <forewarn/alibaba/endpoint.hpp>
#include <forewarn/aws/endpoint.hpp>
#include <forewarn/azure/endpoint.hpp>
#include <forewarn/cloud_facts.hpp>
#include <forewarn/config.hpp>
#include <forewarn/event.hpp>
#include <forewarn/gce/endpoint.hpp>
#include <forewarn/tencent/endpoint.hpp>

#include <array>
#include <cstddef>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE

/// Every cloud's wire facts, in order of preference.
inline constexpr std::array<cloud_facts, 5> clouds = {azure::facts, gce::facts, aws::facts, alibaba::facts, tencent::facts};

/// The place of `c` in `clouds`; clouds.size() for cloud::none.
constexpr std::size_t cloud_index(cloud c) noexcept {
    std::size_t i = 0;
    while (i < clouds.size() && clouds[i].id != c) ++i;
    return i;
}

/// The facts of the cloud named `name` ("azure", ...: to_string(cloud)); nullptr for any other text.
constexpr const cloud_facts* find_cloud(std::string_view name) noexcept {
    for (const auto& f : clouds)
        if (f.name == name) return &f;
    return nullptr;
}
/// The facts of `c`; nullptr for cloud::none.
constexpr const cloud_facts* find_cloud(cloud c) noexcept {
    const std::size_t i = cloud_index(c);
    return i < clouds.size() ? &clouds[i] : nullptr;
}

namespace detail {
constexpr bool clouds_agree_with_enum() noexcept {
    for (std::size_t i = 0; i < clouds.size(); ++i)
        if (clouds[i].name != to_string(clouds[i].id) || cloud_from_string(clouds[i].name) != clouds[i].id) return false;
    return true;
}
}  // namespace detail
static_assert(detail::clouds_agree_with_enum(), "each cloud's facts name it as to_string(cloud) does");

FOREWARN_END_NAMESPACE
