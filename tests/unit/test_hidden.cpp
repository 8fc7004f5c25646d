// SPDX-License-Identifier: MIT
// detail::hidden<T>, the member whose type only a definition file knows (the change tracker's,
// the approval policy's and the pause meter's maps by id): copies are deep, a moved-from or
// never-written one reads as a default-made T, and every T made is destroyed once.
#include <forewarn/detail/hidden-inl.hpp>

#include "catch.hpp"

#include <utility>
#include <vector>

namespace test_hidden {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

namespace {

struct counted {
    static int alive;
    std::vector<int> values;
    counted() { ++alive; }
    counted(const counted& other) : values(other.values) { ++alive; }
    counted& operator=(const counted&) = default;
    ~counted() { --alive; }
};
int counted::alive = 0;

using box = forewarn::detail::hidden<counted>;

std::vector<int> read(const box& b) { return b->values; }

// The Ts alive besides the one every empty box reads (made here first, so it is counted).
int alive_now() {
    const box empty;
    (void)read(empty);
    return counted::alive;
}

}  // namespace

TEST_CASE("detail::hidden: reads a default-made T until written, and a read makes none", "[hidden]") {
    const int before = alive_now();
    {
        box b;
        const box& cb = b;
        CHECK(read(cb).empty());
        CHECK(counted::alive == before);  // a read of an empty box makes nothing
        b->values.push_back(1);
        CHECK(counted::alive == before + 1);
        CHECK(read(b) == std::vector<int>{1});
    }
    CHECK(counted::alive == before);
}

TEST_CASE("detail::hidden: a copy is its own value, whichever side was empty", "[hidden]") {
    const int before = alive_now();
    {
        box a;
        a->values = {1, 2};
        box b(a);
        b->values.push_back(3);
        CHECK(read(a) == std::vector<int>{1, 2});
        CHECK(read(b) == std::vector<int>{1, 2, 3});

        box c;
        c = a;  // empty <- written
        c->values.push_back(4);
        CHECK(read(a) == std::vector<int>{1, 2});
        CHECK(read(c) == std::vector<int>{1, 2, 4});

        c = b;  // written <- written
        CHECK(read(c) == std::vector<int>{1, 2, 3});
        c->values.clear();
        CHECK(read(b) == std::vector<int>{1, 2, 3});

        box empty;
        b = empty;  // written <- empty: reads empty
        CHECK(read(b).empty());
        b->values.push_back(5);
        CHECK(read(b) == std::vector<int>{5});
        CHECK(read(empty).empty());

        box& same = a;
        a = same;  // itself
        CHECK(read(a) == std::vector<int>{1, 2});

        const box from_empty(empty);
        CHECK(read(from_empty).empty());
    }
    CHECK(counted::alive == before);  // each T made was destroyed once
}

TEST_CASE("detail::hidden: a move takes the value, and the source reads empty and stays usable", "[hidden]") {
    const int before = alive_now();
    {
        box a;
        a->values = {7};
        box b(std::move(a));
        CHECK(read(b) == std::vector<int>{7});
        CHECK(read(a).empty());  // NOLINT(bugprone-use-after-move): what a moved-from box reads
        a->values.push_back(8);
        CHECK(read(a) == std::vector<int>{8});

        box c;
        c->values = {9};
        c = std::move(b);  // the old value of c is destroyed here
        CHECK(read(c) == std::vector<int>{7});
        CHECK(read(b).empty());  // NOLINT(bugprone-use-after-move)
    }
    CHECK(counted::alive == before);  // each T made was destroyed once
}

}  // namespace test_hidden
