import { execa } from 'execa';
test('execa under jest', async () => {
  const r = await execa('echo', ['hi']);
  expect(r.stdout).toBe('hi');
});
