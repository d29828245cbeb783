# Written by `vnic experiment`. Redraw with `gnuplot NAME.gp` in this folder:
# the files below are named relative to it.
set terminal pngcairo size 840,440 noenhanced font 'sans,10'
set output 'replenish-split.png'
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
set style fill solid 0.75 border -1
set boxwidth 0.7
set yrange [0:*]
set offsets 0.5, 0.5, 0, 0
set xtics rotate by -30 left
set format y '%.3g'
set bmargin 6
set multiplot layout 1,2 title 'replenish (ibmvnic rr 1/7): rr 150 sessions, rx-replenish always vs low'
set title 'transactions/s'
plot 'replenish-split.csv' using 0:(column('tps')):(int(column('variant_no'))%8+1):xtic(stringcolumn('case')) with boxes lc variable notitle, \
  '' using 0:(column('tps')):(sprintf('%.3g', column('tps'))) with labels offset 0,0.7 notitle
set title 'replenish calls per 1000 polls'
plot 'replenish-split.csv' using 0:(column('rx_replenish_per_1k_polls')):(int(column('variant_no'))%8+1):xtic(stringcolumn('case')) with boxes lc variable notitle, \
  '' using 0:(column('rx_replenish_per_1k_polls')):(sprintf('%.3g', column('rx_replenish_per_1k_polls'))) with labels offset 0,0.7 notitle
unset multiplot
