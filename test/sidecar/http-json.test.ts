/** The sidecar's strict JSON bodies: a prototype key is named in a 400, not reported as JSON that does not parse. */
import Fastify from 'fastify';
import { z } from 'zod';
import { MAX_JSON_DEPTH, nestedDeeperThan, useErrorReplies, useStrictJsonBodies } from '../../sidecar/http-json';

test('a __proto__ or constructor.prototype key is refused by name; valid JSON with neither is parsed', async () => {
  const app = Fastify();
  useStrictJsonBodies(app);
  useErrorReplies(app, () => undefined);
  app.post('/eval', async (req) => z.strictObject({ split: z.string() }).parse(req.body));
  const send = (payload: string) => app.inject({ method: 'POST', url: '/eval', headers: { 'content-type': 'application/json' }, payload });
  try {
    const proto = await send('{"split": "train", "__proto__": {"x": 1}}');
    expect(proto.statusCode).toBe(400);
    expect(proto.json()).toEqual({ error: 'invalid request: (body): the key "__proto__" is not accepted' });
    const nested = await send('{"split": "train", "a": {"constructor": {"prototype": {}}}}');
    expect(nested.json()).toEqual({ error: 'invalid request: (body): the key "constructor" is not accepted' });
    expect((await send('{"split": "train"}')).json()).toEqual({ split: 'train' });
    expect((await send('{"split": "prototype __proto__ in a value"}')).json()).toEqual({ split: 'prototype __proto__ in a value' });
    expect((await send('{"split": ')).statusCode).toBe(400);
  } finally {
    await app.close();
  }
});

test('nesting is measured outside strings: brackets and escaped quotes inside a string do not count', () => {
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  expect(nestedDeeperThan(deep(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
  expect(nestedDeeperThan(deep(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
  expect(nestedDeeperThan(`{"a": "${'[{'.repeat(500)}\\" [[["}`, 3)).toBe(false);
  expect(nestedDeeperThan(`{"a": "\\\\", "b": [[[[]]]]}`, 3)).toBe(true);
});
