/** A command's output on stdout: a line, a JSON document, or (for the sidecar's answers) either, as asked. */
import { camelCaseKeys } from '../model/json-case';

export const print = (s: string): void => void process.stdout.write(`${s}\n`);
export const printJson = (v: unknown): void => print(JSON.stringify(v, null, 2));

/** A sidecar's answer as text, or as JSON: the API's fields camelCased, like every `vero … --json` (model/json-case.ts). */
export const printAnswer = (v: unknown, json?: boolean, text?: () => string): void =>
  print(json || !text ? JSON.stringify(camelCaseKeys(v), null, 2) : text());
