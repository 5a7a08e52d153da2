// Uploads a file with the real AWS client (@aws-sdk/client-s3), so a test can plant an
// object written by another tool:
//   node put_object.mjs --endpoint URL --bucket B --key K --file F [--access-key AK --secret-key SK]
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    endpoint: { type: 'string' }, bucket: { type: 'string' }, key: { type: 'string' }, file: { type: 'string' },
    'access-key': { type: 'string', default: 'tockaccess' }, 'secret-key': { type: 'string', default: 'tocksecret' },
  },
});

const client = new S3Client({
  endpoint: values.endpoint, region: 'us-east-1', forcePathStyle: true,
  credentials: { accessKeyId: values['access-key'], secretAccessKey: values['secret-key'] },
});
try {
  await client.send(new PutObjectCommand({ Bucket: values.bucket, Key: values.key, Body: readFileSync(values.file) }));
  process.stdout.write('{"ok":true}\n');
} catch (err) {
  process.stderr.write(`put_object: ${err.name}: ${err.message}\n`);
  process.exit(1);
}
