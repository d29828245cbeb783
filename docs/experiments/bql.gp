# Written by `vnic experiment`. Redraw with `gnuplot NAME.gp` in this folder:
# the files below are named relative to it.
set terminal pngcairo size 1000,660 noenhanced font 'sans,10'
set output 'bql.png'
set datafile separator ','
set grid ytics
set border 3
set tics nomirror
set linetype 1 lc rgb '#0072b2' lw 2
set linetype 2 lc rgb '#d55e00' lw 2
set linetype 3 lc rgb '#009e73' lw 2
set linetype 4 lc rgb '#cc79a7' lw 2
set linetype 5 lc rgb '#e69f00' lw 2
set linetype 6 lc rgb '#56b4e9' lw 2
set linetype 7 lc rgb '#000000' lw 2
set linetype 8 lc rgb '#f0e442' lw 2
set key outside right top
set yrange [0:*]
set format y '%.3g'
set multiplot layout 2,1 title 'bql (ibmvnic rr 6/7): BQL limit and inflight of side A tx queue 0, rr 150 sessions'
set title 'bql-complete=per-entry'
set xlabel 'seconds'
set ylabel 'bytes'
plot 'bql_rr150_per-entry.csv' using (column('t_s')):(column('tx0_bql_limit')) with lines lt 1 title 'limit', \
  'bql_rr150_per-entry.csv' using (column('t_s')):(column('tx0_bql_inflight')) with lines lt 2 title 'inflight'
set title 'bql-complete=per-round'
set xlabel 'seconds'
set ylabel 'bytes'
plot 'bql_rr150_per-round.csv' using (column('t_s')):(column('tx0_bql_limit')) with lines lt 1 title 'limit', \
  'bql_rr150_per-round.csv' using (column('t_s')):(column('tx0_bql_inflight')) with lines lt 2 title 'inflight'
unset multiplot
