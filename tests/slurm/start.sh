#!/usr/bin/env bash
# Start a real single-node Slurm on this machine for the tests: munged, slurmctld and slurmd on
# localhost, state and logs under $1 (default /tmp/knobs-slurm). Prints the slurm.conf path.
# Needs root and Debian's slurm-wlm and munge (make setup-slurm installs them).
set -euo pipefail
root=${1:-/tmp/knobs-slurm}
mkdir -p "$root"/{state,spool,munge}
host=$(hostname -s)
cpus=$(nproc)
memory=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))

# munge: a key of our own, a socket of our own
if [ ! -f "$root/munge/munge.key" ]; then
  dd if=/dev/urandom bs=1 count=1024 of="$root/munge/munge.key" status=none
  chmod 400 "$root/munge/munge.key"
fi
mkdir -p /run/munge
munged --force --key-file="$root/munge/munge.key" --socket=/run/munge/munge.socket.2 \
  --pid-file="$root/munge/munged.pid" --log-file="$root/munge/munged.log" \
  --seed-file="$root/munge/munge.seed" 2>/dev/null || true

cat > "$root/slurm.conf" <<CONF
ClusterName=knobs
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$root/state
SlurmdSpoolDir=$root/spool
SlurmctldPidFile=$root/slurmctld.pid
SlurmdPidFile=$root/slurmd.pid
SlurmctldLogFile=$root/slurmctld.log
SlurmdLogFile=$root/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
# squeue must still show finished jobs when the executor plugin asks (it checks every ~40 s)
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

# Slurm's commands inside a job (srun in the executor's job step) read the default path
# only: put ours there, unless the machine has a Slurm config of its own.
conf=/etc/slurm/slurm.conf
if [ -e "$conf" ] && ! grep -q "^ClusterName=knobs$" "$conf"; then
  echo "$conf exists and is not ours: not touching a real Slurm" >&2
  exit 1
fi
mkdir -p /etc/slurm
cp "$root/slurm.conf" "$conf"
export SLURM_CONF=$conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 30); do
  if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    echo "$SLURM_CONF"
    exit 0
  fi
  sleep 1
done
echo "slurm did not come up; see $root/slurmctld.log and $root/slurmd.log" >&2
exit 1
