#!/bin/sh
# ordering: 60 rounds of fork+exec of two fixture programs at once, so the
# children start on either CPU (see scripts/record-fixtures.sh "ordering").
i=0
while [ $i -lt 60 ]; do
	/tmp/kfold-fx/bin/forkexec-child 0.003 &
	/tmp/kfold-fx/bin/syscall 0.003
	wait
	i=$((i + 1))
done
