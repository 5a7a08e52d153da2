// Uploads a file with the real AWS client (@aws-sdk/client-s3), so a test can plant an
// object written by another tool than Tock:
//   node put_object.mjs --endpoint URL --bucket B --key K --file F [--access-key AK --secret-key SK]
// Prints {"ok":true}; exits 1 with the error on stderr.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { readFileSync } from 'node:fs';
import { s3Client, scriptArgs } from './aws_client.mjs';

const args = scriptArgs('node put_object.mjs --endpoint URL --bucket B --key K --file F [--access-key AK --secret-key SK]',
                        { bucket: { type: 'string' }, key: { type: 'string' }, file: { type: 'string' } },
                        ['bucket', 'key', 'file']);
const client = s3Client({ endpoint: args.endpoint, accessKey: args['access-key'], secretKey: args['secret-key'] });

try {
  await client.send(new PutObjectCommand({ Bucket: args.bucket, Key: args.key, Body: readFileSync(args.file) }));
  process.stdout.write('{"ok":true}\n');
} catch (err) {
  process.stderr.write(`put_object: ${err.name}: ${err.message}\n`);
  process.exit(1);
}
