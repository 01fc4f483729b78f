#!/usr/bin/env bash
# Stop what start.sh started.
root=${1:-/tmp/knobs-slurm}
for pidfile in "$root/slurmd.pid" "$root/slurmctld.pid" "$root/munge/munged.pid"; do
  [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
done
grep -q "^ClusterName=knobs$" /etc/slurm/slurm.conf 2>/dev/null && rm -f /etc/slurm/slurm.conf
exit 0
