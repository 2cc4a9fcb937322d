// The overview's per-day chart: orders (bars) and cashback (line) of one currency, drawn with uPlot.
// Why uPlot: ~20 KB gzipped against Chart.js's ~70 KB, which keeps sign-in + overview under the
// 200 KB budget (bench/admin.js), and it draws a time series this size in a few milliseconds.
// The chart is a picture of the table beside it (which screen readers read instead): amounts are
// plotted as numbers only to place the points; every amount shown is the API's decimal string.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartDay {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  count: number;
  /** The API's decimal string. */
  cashback: string;
}

const HEIGHT = 240;
const utc = (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');

export function DailyChart({ days, currency, label }: { days: ChartDay[]; currency: string; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
    const data: uPlot.AlignedData = [xs, days.map((d) => d.count), days.map((d) => Number(d.cashback))];
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 320),
        height: HEIGHT,
        tzDate: utc,
        cursor: { show: false },
        legend: { show: false },
        // Half a day either side, so the first and last days' bars are drawn whole.
        scales: {
          x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] },
          orders: { auto: true, range: (_u, _min, max) => [0, Math.max(1, max)] },
          money: { auto: true, range: (_u, _min, max) => [0, Math.max(1, max)] },
        },
        series: [
          {},
          {
            label: 'Orders',
            scale: 'orders',
            stroke: '#2271b1',
            fill: 'rgba(34, 113, 177, 0.35)',
            paths: uPlot.paths.bars?.({ size: [0.7, 24] }),
            points: { show: false },
          },
          {
            label: `Cashback (${currency})`,
            scale: 'money',
            stroke: '#b32d2e',
            width: 2,
          },
        ],
        axes: [
          { stroke: '#50575e', grid: { stroke: '#f0f0f1' } },
          { scale: 'orders', stroke: '#2271b1', grid: { stroke: '#f0f0f1' }, values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? String(t) : '')) },
          { scale: 'money', side: 1, stroke: '#b32d2e', grid: { show: false } },
        ],
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 320), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days, currency]);
  return (
    <figure className="ct-chart">
      <div ref={box} role="img" aria-label={label} />
      <figcaption className="ct-chart-legend">
        <span className="ct-swatch ct-swatch-orders" /> Orders <span className="ct-swatch ct-swatch-cashback" /> Cashback ({currency})
      </figcaption>
    </figure>
  );
}
