// SPDX-License-Identifier: MIT
// Alternative (c), the floor: one libcurl easy handle, kept-alive connection, N GETs, the body
// kept in a string and never parsed. Nothing can poll over HTTP for much less.
//
//   forewarn-bench-raw-libcurl URL N          URL is the full Scheduled Events URL
//   forewarn-bench-raw-libcurl BASE N aws     IMDSv2: one token PUT, then per poll the three GETs
//                                            an AWS notice reader needs, each with the token
//   forewarn-bench-raw-libcurl URL N every=MS one poll every MS milliseconds (a paced loop, the
//                                            comparison for an agent at 1 Hz: tests/bench/watch_cost.sh)
//   forewarn-bench-raw-libcurl URL N options=LETTERS
//                                            the same GETs with some of curl_transport's choices, to
//                                            price each (tests/bench/curl_options.sh): m the multi
//                                            interface (a handle added and removed per request),
//                                            u CURLOPT_USERAGENT, U a User-Agent line in the header
//                                            list, h a header callback, p a progress callback,
//                                            t both timeouts
//
// (libcurl used directly is fine here: this is a benchmark program, not a library header.)

#include "common.hpp"

#include <curl/curl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {
std::size_t keep(char* data, std::size_t size, std::size_t count, void* out) {
    static_cast<std::string*>(out)->append(data, size * count);
    return size * count;
}
std::size_t skip_header(char*, std::size_t size, std::size_t count, void*) { return size * count; }
int keep_going(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) { return 0; }

// One exchange through a multi handle, as curl_transport does it (so that stop() can interrupt it).
CURLcode perform_multi(CURLM* multi, CURL* h) {
    if (curl_multi_add_handle(multi, h) != CURLM_OK) return CURLE_FAILED_INIT;
    CURLcode outcome = CURLE_OK;
    for (bool done = false; !done;) {
        int running = 0;
        if (curl_multi_perform(multi, &running) != CURLM_OK) {
            outcome = CURLE_FAILED_INIT;
            break;
        }
        int queued = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == h) {
                done = true;
                outcome = msg->data.result;
            }
        }
        if (!done) curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
    curl_multi_remove_handle(multi, h);
    return outcome;
}
}  // namespace

int main(int argc, char** argv) {
    const char* usage = "URL N [aws] [every=MS] [options=mhptuU]";
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        return 2;
    }
    const long n = bench::count_arg(argc, argv, 2, usage);
    bool aws = false;
    long every_ms = 0;
    std::string options;
    for (int i = 3; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "aws") aws = true;
        else if (a.rfind("every=", 0) == 0) every_ms = std::strtol(a.c_str() + 6, nullptr, 10);
        else if (a.rfind("options=", 0) == 0 && a.find_first_not_of("mhptuU", 8) == std::string::npos) options = a.substr(8);
        else {
            std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
            return 2;
        }
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL* h = curl_easy_init();
    std::string body;
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    long errors = 0;
    std::size_t bytes = 0;
    curl_slist* headers = nullptr;
    std::vector<std::string> urls;
    if (aws) {
        const std::string base = argv[1];
        curl_slist* ttl = curl_slist_append(nullptr, "X-aws-ec2-metadata-token-ttl-seconds: 21600");
        curl_easy_setopt(h, CURLOPT_URL, (base + "/latest/api/token").c_str());
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, ttl);
        long status = 0;
        if (curl_easy_perform(h) != CURLE_OK || curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK ||
            status != 200) {
            std::fprintf(stderr, "raw-libcurl: the token PUT failed (HTTP %ld)\n", status);
            return 1;
        }
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, nullptr);
        curl_slist_free_all(ttl);
        headers = curl_slist_append(nullptr, ("X-aws-ec2-metadata-token: " + body).c_str());
        for (const char* path : {"/latest/meta-data/events/maintenance/scheduled", "/latest/meta-data/spot/instance-action",
                                 "/latest/meta-data/events/recommendations/rebalance"})
            urls.push_back(base + path);
    } else {
        headers = curl_slist_append(nullptr, "Metadata: true");
        urls.push_back(argv[1]);
    }
    const auto with = [&options](char c) { return options.find(c) != std::string::npos; };
    if (with('U')) headers = curl_slist_append(headers, "User-Agent: forewarn-bench");
    if (with('u')) curl_easy_setopt(h, CURLOPT_USERAGENT, "forewarn-bench");
    if (with('h')) curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, skip_header);
    if (with('p')) {
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, keep_going);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }
    if (with('t')) {
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 2000L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
    }
    CURLM* multi = with('m') ? curl_multi_init() : nullptr;
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    const double cpu0 = bench::cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) {
        if (every_ms > 0 && i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(every_ms));
        for (const auto& url : urls) {
            body.clear();
            curl_easy_setopt(h, CURLOPT_URL, url.c_str());
            long status = 0;
            // 404 is an answer here: AWS's "no Spot notice" and "no rebalance recommendation".
            if ((multi != nullptr ? perform_multi(multi, h) : curl_easy_perform(h)) != CURLE_OK ||
                curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK || (status != 200 && status != 404))
                ++errors;
            bytes += body.size();
        }
    }
    const double wall = bench::since(t0), cpu = bench::cpu_seconds() - cpu0;
    std::printf("{\"polls\":%ld,\"errors\":%ld,\"bytes\":%zu,\"loop_cpu_s\":%.6f,\"loop_wall_s\":%.6f,\"rss_kb\":%ld,\"peak_rss_kb\":%ld}\n", n,
                errors, bytes, cpu, wall, bench::proc_status_kb("VmRSS"), bench::proc_status_kb("VmHWM"));
    curl_slist_free_all(headers);
    if (multi != nullptr) curl_multi_cleanup(multi);
    curl_easy_cleanup(h);
    curl_global_cleanup();
    return errors == 0 ? 0 : 1;
}
