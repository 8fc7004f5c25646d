// SPDX-License-Identifier: MIT
// The testing headers before the rest: when forewarn::testing had a detail namespace of its own, a
// header that wrote detail::x meaning forewarn::detail::x inside forewarn::testing compiled only
// when included first (manual_clock.hpp did, until this file caught it). There is one detail
// namespace now; this file keeps it that way.
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/simulated_transport.hpp>
#include <forewarn/testing/manual_clock.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/forewarn.hpp>
