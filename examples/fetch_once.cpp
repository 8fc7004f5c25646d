// SPDX-License-Identifier: MIT
// forewarn-fetch-once: print the current Azure Scheduled Events document once, readable or as JSON.
//
//   forewarn-fetch-once [--endpoint URL] [--api-version V] [--json]
//
// Exit status: 0 with a document, 1 when the service could not be read, 2 on a usage error.

#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/json.hpp>
#include <forewarn/time.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

namespace {

void usage(std::ostream& out) {
    out << "usage: forewarn-fetch-once [--endpoint URL] [--api-version V] [--json]\n"
           "  --endpoint URL     metadata service base URL (default: $FOREWARN_AZURE_ENDPOINT,\n"
           "                     then $SCHEDULEDEVENTSIP, then http://169.254.169.254)\n"
           "  --api-version V    Scheduled Events api-version (default 2020-07-01)\n"
           "  --json             print the parsed document as one JSON object\n";
}

std::string when(const forewarn::event& e) {
    return e.not_before ? forewarn::format_iso8601(*e.not_before) : std::string("-");
}

void print_readable(const forewarn::document& doc, const std::string& url) {
    std::cout << url << "\nDocumentIncarnation " << doc.incarnation << ", " << doc.events.size()
              << (doc.events.size() == 1 ? " event\n" : " events\n");
    for (const auto& e : doc.events) {
        std::cout << "\n  " << e.id << "\n    type        " << e.raw_type << " (" << forewarn::to_string(e.type)
                  << ")\n    status      " << e.raw_status << "\n    not before  " << when(e) << "\n    resources  ";
        for (const auto& r : e.resources) std::cout << ' ' << r;
        std::cout << '\n';
        if (!e.resource_type.empty()) std::cout << "    resource    " << e.resource_type << '\n';
        if (e.source) std::cout << "    source      " << e.raw_source << '\n';
        if (e.duration_in_seconds)
            std::cout << "    duration    "
                      << (e.duration() ? std::to_string(e.duration()->count()) + " s" : std::string("unknown")) << '\n';
        if (!e.description.empty()) std::cout << "    description " << e.description << '\n';
    }
}

// The document in forewarn's one public JSON form (json.hpp): the same event members that
// forewarn-watch --json prints.
bool print_json(const forewarn::document& doc) {
    auto text = forewarn::to_json(doc, forewarn::invalid_utf8::replace);
    if (!text) return false;
    std::cout << *text << '\n';
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    forewarn::azure::client_options options;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        auto value = [&](std::string& out) {
            if (i + 1 >= argc) return false;
            out = argv[++i];
            return true;
        };
        if (arg == "--json") {
            json = true;
        } else if (arg == "--endpoint") {
            if (!value(options.endpoint)) return usage(std::cerr), 2;
        } else if (arg == "--api-version") {
            if (!value(options.api_version)) return usage(std::cerr), 2;
        } else if (arg == "--help" || arg == "-h") {
            usage(std::cout);
            return 0;
        } else {
            std::cerr << "forewarn-fetch-once: unknown argument " << arg << '\n';
            usage(std::cerr);
            return 2;
        }
    }

    forewarn::azure::scheduled_events_client client(options);
    auto doc = client.fetch();
    if (!doc) {
        std::cerr << "forewarn-fetch-once: " << client.url() << ": " << doc.error().describe() << '\n';
        return doc.error().code == forewarn::errc::invalid_argument ? 2 : 1;
    }
    if (json) {
        if (!print_json(*doc)) {
            std::cerr << "forewarn-fetch-once: the document holds text that is not valid UTF-8\n";
            return 1;
        }
    } else {
        print_readable(*doc, client.url());
    }
    return 0;
}
