// SPDX-License-Identifier: MIT
// The testing headers before the rest: forewarn::testing has a detail namespace of its own, so a
// header that wrote detail::x meaning forewarn::detail::x inside forewarn::testing compiled only
// when included first (manual_clock.hpp did, until this file caught it).
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/simulated_transport.hpp>
#include <forewarn/testing/manual_clock.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/forewarn.hpp>
