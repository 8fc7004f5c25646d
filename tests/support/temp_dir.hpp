// SPDX-License-Identifier: MIT
#pragma once

// A test's temporary directory: made empty when the test starts, removed with everything in it
// when the test ends, passed or failed (a REQUIRE that throws unwinds through the destructor).

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <random>

namespace forewarn_test {

struct temp_dir {
    std::filesystem::path path;

    /// <temp>/forewarn-<name>-<random>-<time>-<count>: no other temp_dir of any process has it now.
    explicit temp_dir(const std::string& name) : path(std::filesystem::temp_directory_path() / ("forewarn-" + name + "-" + unique())) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }

    /// A file's path inside it, as a string.
    std::string file(const std::string& name) const { return (path / name).string(); }

private:
    static std::string unique() {
        // A random number per process (another process's tests draw another), then a count.
        static const unsigned long long process = std::random_device{}() * 0x100000000ull + std::random_device{}();
        static std::atomic<unsigned> counter{0};
        return std::to_string(process) + "-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) +
               "-" + std::to_string(counter.fetch_add(1));
    }
};

}  // namespace forewarn_test
