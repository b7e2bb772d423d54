import * as fs from 'node:fs';
import * as path from 'node:path';
import { connectionExtrasFromEnv } from '../../infra/temporal-connection';
import { tempDir } from '../helpers/fixtures';

test('plain by default; an API key implies TLS; mTLS needs both files', () => {
  expect(connectionExtrasFromEnv({})).toEqual({});
  expect(connectionExtrasFromEnv({ VERO_TEMPORAL_API_KEY: 'k' })).toEqual({ tls: true, apiKey: 'k' });
  expect(connectionExtrasFromEnv({ VERO_TEMPORAL_TLS: 'true' })).toEqual({ tls: true });
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'c.pem'), 'CERT');
  fs.writeFileSync(path.join(dir, 'k.pem'), 'KEY');
  const mtls = connectionExtrasFromEnv({
    VERO_TEMPORAL_TLS_CERT: path.join(dir, 'c.pem'),
    VERO_TEMPORAL_TLS_KEY: path.join(dir, 'k.pem'),
    VERO_TEMPORAL_TLS_SERVER_NAME: 'ns.tmprl.cloud',
  });
  expect(mtls).toEqual({
    tls: { clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') }, serverNameOverride: 'ns.tmprl.cloud' },
  });
  expect(() => connectionExtrasFromEnv({ VERO_TEMPORAL_TLS_CERT: path.join(dir, 'c.pem') })).toThrow(
    'VERO_TEMPORAL_TLS_CERT and VERO_TEMPORAL_TLS_KEY go together (mTLS)',
  );
  expect(() => connectionExtrasFromEnv({ VERO_TEMPORAL_TLS_CERT: '/nope', VERO_TEMPORAL_TLS_KEY: '/nope' })).toThrow(
    'VERO_TEMPORAL_TLS_CERT: cannot read /nope (ENOENT)',
  );
});
