#!/usr/bin/env bash
# Where a state transition's write-ahead-log pages go, b-tree by b-tree (issue 35): runs N
# one-activity workflows (default 200) one after another with a real TypeScript SDK worker
# against tock-server on a fresh database file, kills the server with SIGKILL so that the
# log is left as written (no checkpoint; 10,000 pages hold about 1,400 transitions), then
# reads every frame's page number from the log and names its table or index through the
# database's dbstat view. Prints frames per commit for each b-tree.
#   bench/wal_breakdown.sh [N]      (needs ./build/cmd/tock-server/tock-server and tests/sdk's
#                                    node_modules: ./scripts/test.sh or bench/run.sh install them)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200}"
dir="$(mktemp -d)"
trap 'kill -9 "${pid:-0}" 2>/dev/null || true; rm -rf "$dir"' EXIT
./build/cmd/tock-server/tock-server --port 0 --db-file "$dir/tock.db" >"$dir/banner" 2>"$dir/log" &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$dir/banner" && break; sleep 0.1; done
address="$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$dir/banner")"
(cd tests/sdk && node --input-type=module - "$address" "$n" <<'JS'
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
Runtime.install({ logger: new DefaultLogger('WARN') });
const [address, n] = process.argv.slice(2);
const native = await NativeConnection.connect({ address });
const worker = await Worker.create({ connection: native, taskQueue: 'wal', workflowsPath: new URL('./workflows.js', `file://${process.cwd()}/`).pathname, activities });
const connection = await Connection.connect({ address });
const client = new Client({ connection });
await worker.runUntil(async () => {
  for (let i = 0; i < Number(n); i++) {
    await client.workflow.execute('activityRoundTrip', { taskQueue: 'wal', workflowId: `wal-${i}`, args: ['x'] });
  }
});
await connection.close();
await native.close();
JS
)
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
# The frames first: opening the database replays the log and, on close, checkpoints it away.
cp "$dir/tock.db-wal" "$dir/frames"
sqlite3 "$dir/tock.db" "SELECT pageno, name FROM dbstat" >"$dir/pages"
python3 - "$dir/frames" "$dir/pages" <<'PY'
import collections, struct, sys
wal = open(sys.argv[1], 'rb').read()
page_size = struct.unpack('>I', wal[8:12])[0]
owner = dict(line.rstrip('\n').split('|', 1) for line in open(sys.argv[2]))
frames, commits, off = collections.Counter(), 0, 32
while off + 24 + page_size <= len(wal):
    page, commit_size = struct.unpack('>II', wal[off:off + 8])
    frames[owner.get(str(page), 'free or other')] += 1
    commits += commit_size != 0
    off += 24 + page_size
total = sum(frames.values())
print(f'{commits} commits, {total} frames: {total / commits:.2f} pages per commit')
for name, count in frames.most_common():
    if count / commits >= 0.01:
        print(f'{count / commits:6.2f}  {name}')
PY
