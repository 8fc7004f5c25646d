// SPDX-License-Identifier: MIT
// The AWS SDK for JavaScript's @aws-sdk/ec2-metadata-service, unchanged, against forewarn-emulator:
// only the endpoint option points it there. IMDSv1 is off (ec2MetadataV1Disabled), so every read
// needs the session token the emulator issues.
// usage: node aws_sdk_imds_check.js ENDPOINT
const { MetadataService } = require('@aws-sdk/ec2-metadata-service');

(async () => {
  const ms = new MetadataService({ endpoint: process.argv[2], ec2MetadataV1Disabled: true, retries: 0,
                                   httpOptions: { timeout: 5000 } });
  const token = await ms.fetchMetadataToken();
  const instanceId = await ms.request('/latest/meta-data/instance-id', {});
  const spot = JSON.parse(await ms.request('/latest/meta-data/spot/instance-action', {}));
  const scheduled = JSON.parse(await ms.request('/latest/meta-data/events/maintenance/scheduled', {}));
  console.log(JSON.stringify({ token_length: token.length, instance_id: instanceId, spot, scheduled }));
})().catch(err => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
