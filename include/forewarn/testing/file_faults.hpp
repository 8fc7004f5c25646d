// SPDX-License-Identifier: MIT
#pragma once

// The file-system seam of platform::write_file_atomically() (the state file's writes, and
// forewarn-watch's hook journal's), for tests: records each step in order, and fails the steps it
// is told to, as the system would (ENOSPC on a write after K bytes, EIO on a flush, EXDEV on a
// rename...). It shows what no ordinary test can: that the directory is flushed after the rename,
// and that a failure at any step leaves the previous file whole.

#include <forewarn/config.hpp>
#include <forewarn/platform/files.hpp>

#include <cstddef>
#include <filesystem>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/**
 * Installed for as long as it lives (one per process at a time; every thread's writes go through
 * it). Thread-safe.
 *
 * @code
 * forewarn::testing::file_faults faults;
 * faults.fail(forewarn::platform::file_step::write, ENOSPC, 10);  // 10 bytes out, then "No space left"
 * auto r = state.save(st);                                          // errc::io_error, the old file whole
 * @endcode
 */
class file_faults {
public:
    /// One step as write_file_atomically() took it.
    struct call {
        platform::file_step step;
        std::filesystem::path path;  ///< the temporary file; for rename the final path; the directory
        std::size_t bytes = 0;       ///< write: the size it was about to write
        int failed_with = 0;         ///< the errno value this seam failed it with, or 0
    };

    file_faults() {
        platform::file_step_observer o;
        o.call = &file_faults::observe;
        o.context = this;
        platform::detail::file_observer() = o;
    }
    ~file_faults() { platform::detail::file_observer() = platform::file_step_observer{}; }
    file_faults(const file_faults&) = delete;
    file_faults& operator=(const file_faults&) = delete;

    /**
     * Fails the next `count` times `step` is taken with `error_number` (an errno value). For a write,
     * `after_bytes` of the text go out first (a short write cut off by a full disk).
     */
    void fail(platform::file_step step, int error_number, std::size_t after_bytes = 0, int count = 1) {
        std::lock_guard<std::mutex> lock(mutex_);
        faults_.push_back({step, error_number, after_bytes, count});
    }

    /// The steps taken so far, in order, failed or not.
    std::vector<call> calls() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return calls_;
    }

    /// Only the kinds of the steps taken so far, in order.
    std::vector<platform::file_step> steps() const {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<platform::file_step> out;
        for (const auto& c : calls_) out.push_back(c.step);
        return out;
    }

    /// Forgets the steps recorded and the faults not taken yet.
    void clear() {
        std::lock_guard<std::mutex> lock(mutex_);
        calls_.clear();
        faults_.clear();
    }

private:
    struct fault {
        platform::file_step step;
        int error_number;
        std::size_t after_bytes;
        int left;
    };

    static int observe(void* context, platform::file_step step, const std::filesystem::path& path, std::size_t& bytes) {
        auto* self = static_cast<file_faults*>(context);
        std::lock_guard<std::mutex> lock(self->mutex_);
        call c{step, path, bytes, 0};
        for (auto& f : self->faults_) {
            if (f.step != step || f.left <= 0) continue;
            --f.left;
            c.failed_with = f.error_number;
            if (step == platform::file_step::write && f.after_bytes < bytes) bytes = f.after_bytes;
            break;
        }
        self->calls_.push_back(c);
        return c.failed_with;
    }

    mutable std::mutex mutex_;
    std::vector<call> calls_;
    std::vector<fault> faults_;
};

}  // namespace testing
FOREWARN_END_NAMESPACE
