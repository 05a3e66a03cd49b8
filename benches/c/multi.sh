#! /bin/sh
###############################################################################
#  Reference for the shell tests' driver script (unixbench.md 4.10), with the
#  statements of UnixBench's multi.sh: start $1 background instances of tst.sh
#  on sort.src (or on MULTI_SH_WORK_FACTOR copies of it), then wait for them.
#
#  Written for patchbench's fidelity bench; the comment block stands in for the
#  header UnixBench's script carries (the shell reads and skips it every time).
#
#  Usage: multi.sh N   (run in the test directory; $UB_BINDIR holds tst.sh)
#
###############################################################################
#  Modification Log:
#
###############################################################################
ID="patchbench fidelity reference: multi.sh";
instance=1
sort_src=sort.src
work_factor=${MULTI_SH_WORK_FACTOR:-1}
if [ $work_factor -gt 1 ]; then
	inputs=
	for i in $(seq $work_factor); do inputs="$inputs $sort_src"; done
	cat $inputs > sort.src-alt.$$
	sort_src=sort.src-alt.$$
fi

while [ $instance -le $1 ]; do
	/bin/sh "$UB_BINDIR/tst.sh" $sort_src &
	instance=$(($instance + 1))
done
wait

if [ $work_factor -gt 1 ]; then
	rm $sort_src
fi
