// SPDX-License-Identifier: MIT
#include "access.hpp"

#include "../json.hpp"
#include "api.hpp"
#include "node.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <utility>

namespace watch::kubernetes {

const std::vector<permission>& needed_permissions() {
    static const std::vector<permission> all = {
        {"get", "nodes", "", ""},
        {"patch", "nodes", "", ""},
        {"patch", "nodes", "status", ""},
        {"create", "events", "", "default"},
        {"list", "pods", "", ""},              // the drain: the node's pods
        {"create", "pods", "eviction", ""},    // and their evictions
    };
    return all;
}

namespace {

std::string name_of(const permission& p) {
    std::string s = std::string(p.verb) + " " + p.resource;
    if (*p.subresource) s += "/" + std::string(p.subresource);
    if (*p.ns) s += " in namespace " + std::string(p.ns);
    return s;
}

std::string review_body(const permission& p) {
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> w(out);
    w.StartObject();
    w.Key("apiVersion");
    w.String("authorization.k8s.io/v1");
    w.Key("kind");
    w.String("SelfSubjectAccessReview");
    w.Key("spec");
    w.StartObject();
    w.Key("resourceAttributes");
    w.StartObject();
    w.Key("group");
    w.String("");
    w.Key("verb");
    w.String(p.verb);
    w.Key("resource");
    w.String(p.resource);
    if (*p.subresource) {
        w.Key("subresource");
        w.String(p.subresource);
    }
    if (*p.ns) {
        w.Key("namespace");
        w.String(p.ns);
    }
    w.EndObject();
    w.EndObject();
    w.EndObject();
    return out.GetString();
}

// A failed connection or TLS handshake, said for an operator.
check_row unreachable(const connection& c, const forewarn::error& e) {
    check_row f{"kubernetes", check_result::fail, e.describe(), {}, {}};
    const std::string& m = e.message;
    const bool tls = m.find("certificate") != std::string::npos || m.find("SSL") != std::string::npos ||
                     m.find("TLS") != std::string::npos || m.find("issuer") != std::string::npos;
    if (tls) {
        f.cause = "the API server's certificate does not verify against " + (c.ca_file.empty() ? std::string("the system's CAs") : c.ca_file);
        f.fix = "give the cluster's CA (certificate-authority in the kubeconfig; in a pod, the service account's ca.crt)";
    } else if (e.network == forewarn::network_failure::refused) {
        f.cause = "nothing listens at " + c.server;
        f.fix = "check the kubeconfig's server, or KUBERNETES_SERVICE_HOST and _PORT";
    } else {
        f.cause = c.server + " cannot be reached from here";
        f.fix = "check the server's address and the network policy between this node and the API server";
    }
    return f;
}

}  // namespace

std::vector<check_row> check_access(connection c, const std::string& node, std::chrono::milliseconds bound) {
    std::vector<check_row> out;
    const connection where = c;
    api_options o;
    o.timeout = std::max(std::chrono::milliseconds(1), bound / 3);
    o.connect_timeout = std::min(o.timeout, std::chrono::milliseconds(3000));
    o.attempts = 1;  // check says what it sees; the agent retries
    api_client api(std::move(c), o);

    auto version = api.call(http_method::get, "/version");
    if (!version) {
        out.push_back(unreachable(where, version.error()));
        out.push_back({"kubernetes node", check_result::fail, "not asked: the API server cannot be reached", {}, {}});
        return out;
    }
    std::string git_version;
    if (auto doc = parse_json(version->body); doc && doc->IsObject() && doc->HasMember("gitVersion") && (*doc)["gitVersion"].IsString())
        for (const char* ch = (*doc)["gitVersion"].GetString(); *ch && git_version.size() < 40; ++ch)  // network input: a version's characters only
            if ((*ch >= '0' && *ch <= '9') || (*ch >= 'a' && *ch <= 'z') || (*ch >= 'A' && *ch <= 'Z') || *ch == '.' || *ch == '-' || *ch == '+')
                git_version += *ch;
    if (version->status == 401) {
        out.push_back({"kubernetes", check_result::fail, "the API server at " + where.server + " refuses the token (HTTP 401)",
                       "the token is wrong, expired, or for another cluster",
                       where.token.from_file() ? "check " + where.token.path() + " (a pod: the service account's projected token)"
                                               : "give the kubeconfig a current token"});
        return out;
    }
    out.push_back({"kubernetes", check_result::ok,
                   where.server + " answered" + (git_version.empty() ? std::string() : ", Kubernetes " + git_version) +
                       " (TLS verified, " + where.origin + ")",
                   {}, {}});

    node_api n(api, node);
    auto got = n.get();
    if (!got) {
        const auto& e = got.error();
        if (e.http_status == 404)
            out.push_back({"kubernetes node", check_result::fail, "no node named \"" + node + "\"", "--node-name or NODE_NAME is not this node's name",
                           "set NODE_NAME from the downward API (fieldPath: spec.nodeName), or give --node-name"});
        else if (e.http_status == 401)
            out.push_back({"kubernetes node", check_result::fail, e.describe(), "the token is refused", "give a current token"});
        else if (e.http_status == 403)
            out.push_back({"kubernetes node", check_result::fail, e.describe(), "the agent's account may not get nodes",
                           "apply the ClusterRole of examples/kubernetes/forewarn-watch.yaml and bind it to the agent's account"});
        else
            out.push_back({"kubernetes node", check_result::fail, e.describe(), "the node could not be read", "see what the server said"});
    } else {
        out.push_back({"kubernetes node", check_result::ok, "node " + node + " exists" + (got->unschedulable ? " (cordoned)" : ""), {}, {}});
    }

    std::vector<std::string> denied, unknown;
    for (const auto& p : needed_permissions()) {
        auto r = api.call(http_method::post, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review_body(p), json_body);
        if (!r || !r->ok()) {
            unknown.push_back(name_of(p) + " (" + (r ? answer_error("review", *r).describe() : r.error().describe()) + ")");
            continue;
        }
        auto doc = parse_json(r->body);
        const bool allowed = doc && doc->IsObject() && doc->HasMember("status") && (*doc)["status"].IsObject() &&
                             (*doc)["status"].HasMember("allowed") && (*doc)["status"]["allowed"].IsBool() &&
                             (*doc)["status"]["allowed"].GetBool();
        if (!allowed) denied.push_back(name_of(p));
    }
    if (!denied.empty()) {
        std::string list;
        for (const auto& d : denied) list += (list.empty() ? "" : ", ") + d;
        out.push_back({"kubernetes access", check_result::fail, "not allowed: " + list, "the agent's role lacks these rules",
                       "apply the ClusterRole of examples/kubernetes/forewarn-watch.yaml (it carries every rule the agent needs) "
                       "and bind it to the agent's account"});
    } else if (!unknown.empty()) {
        std::string list;
        for (const auto& d : unknown) list += (list.empty() ? "" : "; ") + d;
        out.push_back({"kubernetes access", check_result::fail, "could not ask: " + list, "the access review itself failed",
                       "see what the server said"});
    } else {
        std::string list;
        for (const auto& p : needed_permissions()) list += (list.empty() ? "" : ", ") + name_of(p);
        out.push_back({"kubernetes access", check_result::ok, "allowed: " + list, {}, {}});
    }
    return out;
}

}  // namespace watch::kubernetes
