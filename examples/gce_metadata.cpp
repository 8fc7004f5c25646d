// SPDX-License-Identifier: MIT
// forewarn-gce-metadata: read or watch the GCE metadata server (or forewarn-emulator).
//
//   forewarn-gce-metadata                       identity and the maintenance snapshot
//   forewarn-gce-metadata --watch 60            ... then one line per change (hanging GETs)
//   forewarn-gce-metadata instance/zone         one key: its value and ETag
//   forewarn-gce-metadata --watch 60 KEY        ... then each new value of that key
//   --endpoint http://127.0.0.1:8080            instead of $FOREWARN_GCE_ENDPOINT / the default
#include <forewarn/forewarn.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

int fail(const forewarn::error& e) {
    std::fprintf(stderr, "forewarn-gce-metadata: %s\n", e.describe().c_str());
    return 1;
}

void print(const forewarn::document& d) {
    std::printf("incarnation %s:", d.incarnation.c_str());
    if (d.events.empty()) std::printf(" no maintenance");
    for (const auto& e : d.events)
        std::printf(" [%s %s %s]", e.id.c_str(), std::string(forewarn::to_string(e.type)).c_str(),
                    std::string(forewarn::to_string(e.status)).c_str());
    std::printf("\n");
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    forewarn::gce::client_options options;
    long watch_seconds = 0;
    std::string key;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--endpoint" && i + 1 < argc) {
            options.endpoint = argv[++i];
        } else if (arg == "--watch" && i + 1 < argc) {
            watch_seconds = std::strtol(argv[++i], nullptr, 10);
            if (watch_seconds < 1) {
                std::fprintf(stderr, "forewarn-gce-metadata: --watch wants seconds >= 1\n");
                return 2;
            }
        } else if (!arg.empty() && arg[0] != '-' && key.empty()) {
            key = arg;
        } else {
            std::fprintf(stderr, "usage: forewarn-gce-metadata [--endpoint URL] [--watch SECONDS] [KEY]\n");
            return 2;
        }
    }

    const std::chrono::seconds timeout_sec(watch_seconds);
    if (watch_seconds > 0) options.watch_timeout = timeout_sec;
    forewarn::gce::metadata_client client(options);

    if (!key.empty()) {
        auto v = client.get(key);
        if (!v) return fail(v.error());
        std::printf("%s (ETag %s)\n", v->value.c_str(), v->etag.c_str());
        while (watch_seconds > 0) {
            auto next = client.watch(key, v->etag, timeout_sec);
            if (!next) return fail(next.error());
            if (next->etag != v->etag) std::printf("%s (ETag %s)\n", next->value.c_str(), next->etag.c_str());
            std::fflush(stdout);
            v = std::move(next);
        }
        return 0;
    }

    auto id = client.identity();
    if (!id) return fail(id.error());
    std::printf("instance %s (id %s, host %s), preemptible %s, on-host-maintenance %s, endpoint %s\n",
                id->name.c_str(), id->id.c_str(), id->hostname.c_str(), id->preemptible ? "yes" : "no",
                id->on_host_maintenance.c_str(), client.endpoint().c_str());
    auto doc = client.next();  // the first call reads plainly; later ones hang until a change
    if (!doc) return fail(doc.error());
    print(*doc);
    while (watch_seconds > 0) {
        auto next = client.next();
        if (!next) return fail(next.error());
        if (*next != *doc) print(*next);
        doc = std::move(next);
    }
    return 0;
}
