#! /bin/sh
###############################################################################
#  Reference for one shell-test pipeline instance (unixbench.md 4.10), with the
#  statements of UnixBench's tst.sh: sort the input, dump it with od and sort
#  that numerically, grep "the" through tee into wc, remove the files. $$ (this
#  shell's pid) keeps concurrent instances apart.
#
#  Written for patchbench's fidelity bench; the comment block stands in for the
#  header UnixBench's script carries (the shell reads and skips it every time).
#
#  Usage: /bin/sh tst.sh INPUT   (run by multi.sh)
#
###############################################################################
#  Modification Log:
#
###############################################################################
ID="patchbench fidelity reference: tst.sh";
sort > sort.$$ < $1
od sort.$$ | sort -n -k 1 > od.$$
grep the sort.$$ | tee grep.$$ | wc > wc.$$
rm sort.$$ grep.$$ od.$$ wc.$$
