// SPDX-License-Identifier: MIT
// Alternative (c), the floor: one libcurl easy handle, kept-alive connection, N GETs, the body
// kept in a string and never parsed. Nothing can poll over HTTP for much less.
//
//   forewarn-bench-raw-libcurl URL N    URL is the full Scheduled Events URL
//
// (libcurl used directly is fine here: this is a benchmark program, not a library header.)

#include "common.hpp"

#include <curl/curl.h>

#include <cstdio>
#include <string>

namespace {
std::size_t keep(char* data, std::size_t size, std::size_t count, void* out) {
    static_cast<std::string*>(out)->append(data, size * count);
    return size * count;
}
}  // namespace

int main(int argc, char** argv) {
    const char* usage = "URL N";
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        return 2;
    }
    const long n = bench::count_arg(argc, argv, 2, usage);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL* h = curl_easy_init();
    curl_slist* headers = curl_slist_append(nullptr, "Metadata: true");
    std::string body;
    curl_easy_setopt(h, CURLOPT_URL, argv[1]);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    long errors = 0;
    std::size_t bytes = 0;
    const double cpu0 = bench::cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) {
        body.clear();
        long status = 0;
        if (curl_easy_perform(h) != CURLE_OK ||
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK || status != 200)
            ++errors;
        bytes += body.size();
    }
    const double wall = bench::since(t0), cpu = bench::cpu_seconds() - cpu0;
    std::printf("{\"polls\":%ld,\"errors\":%ld,\"bytes\":%zu,\"loop_cpu_s\":%.6f,\"loop_wall_s\":%.6f,\"rss_kb\":%ld,\"peak_rss_kb\":%ld}\n", n,
                errors, bytes, cpu, wall, bench::proc_status_kb("VmRSS"), bench::proc_status_kb("VmHWM"));
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    curl_global_cleanup();
    return errors == 0 ? 0 : 1;
}
