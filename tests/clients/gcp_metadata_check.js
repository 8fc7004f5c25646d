// SPDX-License-Identifier: MIT
// Google's Node client gcp-metadata, unchanged, against forewarn-emulator: GCE_METADATA_HOST
// (set by check_gcp_metadata.py) is the only thing that points it there.
// usage: node gcp_metadata_check.js EXPECTED_MAINTENANCE_EVENT
const gcpMetadata = require('gcp-metadata');

(async () => {
  const available = await gcpMetadata.isAvailable();
  console.log(JSON.stringify({available}));
  if (!available) process.exit(1);
  const value = await gcpMetadata.instance('maintenance-event');
  const name = await gcpMetadata.instance('name');
  const preemptible = await gcpMetadata.instance('scheduling/preemptible');
  console.log(JSON.stringify({maintenance_event: value, name, preemptible}));
  if (value !== process.argv[2]) {
    console.error(`maintenance-event: expected ${process.argv[2]}, got ${value}`);
    process.exit(1);
  }
})().catch(err => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
