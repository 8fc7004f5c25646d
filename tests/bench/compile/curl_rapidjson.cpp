// SPDX-License-Identifier: MIT
// Compile cost: only what forewarn itself builds on, libcurl's and RapidJSON's headers.
#include <curl/curl.h>
#include <rapidjson/document.h>

int main() { return 0; }
