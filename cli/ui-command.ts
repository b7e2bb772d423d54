/** `vero ui`: the Temporal Web UI's link to the list of evaluations (no chunks, no race entries), or to one. */
import { Command } from 'commander';
import { EVALUATIONS_QUERY, uiLink, uiListLink } from '../client/connection';
import { ConfigError } from '../model/errors';
import { ConnectionFlags, connectionSettings, withConnection } from './options';
import { print, printJson } from './print';

export function registerUiCommand(program: Command): void {
  withConnection(
    program
      .command('ui [evalId]')
      .description(
        "the Temporal Web UI's link: without an id, the list of evaluations and races (their chunks and race entries left out: the UI's filter is the query it prints); with one, that evaluation's page (tab User Metadata: its summary and its progress as tasks finish). Needs no server",
      )
      .option('--json', 'machine-readable output: {"url", "query"} (vero schema ui)'),
  ).action((id: string | undefined, o: ConnectionFlags & { json?: boolean }) => {
    const conn = connectionSettings(o);
    const url = id ? uiLink(conn.uiUrl, conn.namespace, id) : uiListLink(conn.uiUrl, conn.namespace, EVALUATIONS_QUERY);
    if (url === null)
      throw new ConfigError(`no Web UI address is known for the Temporal server at ${conn.address}: pass --ui-url (or set VERO_UI_URL)`);
    const query = id ? null : EVALUATIONS_QUERY;
    if (o.json) return printJson({ url, query });
    print(query ? `${url}\n(the evaluations and races: ${query})` : url);
  });
}
