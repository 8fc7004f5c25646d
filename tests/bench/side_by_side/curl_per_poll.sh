#!/bin/bash
# SPDX-License-Identifier: MIT
# Alternative (d): what shell scripts do, one curl process per poll.
#
#   curl_per_poll.sh URL N        URL: the full Scheduled Events URL
set -u
url=$1 n=$2
for ((i = 0; i < n; i++)); do
  curl -sS --noproxy '*' -H Metadata:true "$url" > /dev/null || exit 1
done
