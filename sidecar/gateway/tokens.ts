/**
 * The gateway's tokens. Each belongs to one scope; only its SHA-256 is stored. The producer's token is made by
 * whoever starts the task (`vero run`), which hands the sidecar its digest only; evaluation tokens are minted per
 * evaluation and revoked when it ends; the finalization token is the sidecar's own.
 */
import * as fs from 'node:fs';
import { z } from 'zod';
import { writeJsonDurable } from '../../infra/atomic-file';
import { GATEWAY_SCOPES, type GatewayScope } from '../../model/gateway/policy';
import { digestOf, newToken } from '../../model/gateway/token';

const TokenRow = z.strictObject({
  id: z.string().min(1),
  scope: z.enum(GATEWAY_SCOPES),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  revoked: z.boolean(),
});
const TokenFile = z.strictObject({ schema_version: z.literal(1), tokens: z.array(TokenRow) });
type TokenRow = z.infer<typeof TokenRow>;

export class TokenStore {
  private constructor(
    private readonly file: string,
    private readonly rows: TokenRow[],
  ) {}

  static open(file: string): TokenStore {
    const rows = fs.existsSync(file) ? TokenFile.parse(JSON.parse(fs.readFileSync(file, 'utf8'))).tokens : [];
    return new TokenStore(file, rows);
  }

  /** Registers a token by its digest (the producer's), replacing an earlier one of the same id. */
  register(id: string, scope: GatewayScope, sha256: string): void {
    const at = this.rows.findIndex((r) => r.id === id);
    const row = TokenRow.parse({ id, scope, sha256, revoked: false });
    if (at >= 0) this.rows[at] = row;
    else this.rows.push(row);
    this.save();
  }

  /** Mints a token for a scope; the caller keeps the only copy of its value. */
  mint(id: string, scope: GatewayScope): string {
    const token = newToken(scope);
    this.register(id, scope, digestOf(token));
    return token;
  }

  revoke(id: string): void {
    const row = this.rows.find((r) => r.id === id);
    if (row && !row.revoked) {
      row.revoked = true;
      this.save();
    }
  }

  /** The live token a request presents, or null. */
  lookup(token: string | undefined): { id: string; scope: GatewayScope } | null {
    if (!token) return null;
    const d = digestOf(token);
    const row = this.rows.find((r) => r.sha256 === d && !r.revoked);
    return row ? { id: row.id, scope: row.scope } : null;
  }

  private save(): void {
    writeJsonDurable(this.file, { schema_version: 1, tokens: this.rows }, { mode: 0o600 });
  }
}
