/** A JSON file read as "its value, or nothing": null when it is missing, torn or not JSON (the caller checks the shape). */
import * as fs from 'node:fs';

export function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}
