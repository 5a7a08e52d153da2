// An RSA key of the test's own, its JWKS file for tock-server's `authorization:`, and RS256
// tokens carrying Temporal's permissions claim.
import { createSign, generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';

const b64url = (data) => Buffer.from(data).toString('base64url');

export function makeIssuer(jwksPath) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'web-test', alg: 'RS256', use: 'sig' };
  writeFileSync(jwksPath, JSON.stringify({ keys: [jwk] }));
  return {
    token(permissions, { subject = 'web-test-user', seconds = 3600 } = {}) {
      const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: 'web-test' }));
      const body = b64url(JSON.stringify({ sub: subject, aud: 'tock', permissions,
        exp: Math.floor(Date.now() / 1000) + seconds, iat: Math.floor(Date.now() / 1000) }));
      const signer = createSign('RSA-SHA256');
      signer.update(`${header}.${body}`);
      return `${header}.${body}.${signer.sign(privateKey).toString('base64url')}`;
    },
  };
}
