"""Reads a W&B run's `.wandb` file with the client's own reader (wandb.sdk.internal.datastore and wandb.proto)
and prints what it holds as JSON: the run (project, group, name, tags, notes, id, config), each history row by
step, the summary updates merged, and each artifact (name, type, file names). Usage: python READER RUN_FILE"""

import json
import sys

from wandb.proto import wandb_internal_pb2 as pb
from wandb.sdk.internal import datastore


def key_of(item):
    return item.key or "/".join(item.nested_key)


def main():
    store = datastore.DataStore()
    store.open_for_scan(sys.argv[1])
    out = {"run": None, "history": [], "summary": {}, "artifacts": [], "exit_code": None}
    while True:
        data = store.scan_data()
        if data is None:
            break
        record = pb.Record()
        record.ParseFromString(data)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            r = record.run
            out["run"] = {
                "id": r.run_id,
                "project": r.project,
                "entity": r.entity,
                "group": r.run_group,
                "name": r.display_name,
                "tags": list(r.tags),
                "notes": r.notes,
                "config": {u.key: json.loads(u.value_json) for u in r.config.update},
            }
        elif kind == "history":
            out["history"].append({key_of(i): json.loads(i.value_json) for i in record.history.item})
        elif kind == "summary":
            for u in record.summary.update:
                if u.key:
                    out["summary"][u.key] = json.loads(u.value_json)
        elif kind == "artifact":
            a = record.artifact
            out["artifacts"].append({"name": a.name, "type": a.type, "files": sorted(m.path for m in a.manifest.contents)})
        elif kind == "exit":
            out["exit_code"] = record.exit.exit_code
    print(json.dumps(out))


if __name__ == "__main__":
    main()
