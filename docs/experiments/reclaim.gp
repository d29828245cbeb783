# Written by `vnic experiment`. Redraw with `gnuplot NAME.gp` in this folder:
# the files below are named relative to it.
set terminal pngcairo size 1000,360 noenhanced font 'sans,10'
set output 'reclaim.png'
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
set multiplot layout 1,1 title 'reclaim (bcmgenet orphan): stream 1 flow on a 100 Mbit/s cable, tx-reclaim policies'
set title 'payload throughput per interval'
set xlabel 'seconds'
set ylabel 'Mbit/s'
plot 'reclaim_intervals.csv' using (column('t_mid_s')):(column('lazy_mbps')) with histeps lt 1 title 'lazy', \
  'reclaim_intervals.csv' using (column('t_mid_s')):(column('irq_mbps')) with histeps lt 2 title 'irq', \
  'reclaim_intervals.csv' using (column('t_mid_s')):(column('napi_mbps')) with histeps lt 3 title 'napi', \
  'reclaim_intervals.csv' using (column('t_mid_s')):(column('orphan_mbps')) with histeps lt 4 title 'orphan', \
  'reclaim_intervals.csv' using (column('t_mid_s')):(column('lazy-1ms_mbps')) with histeps lt 5 title 'lazy-1ms'
unset multiplot
