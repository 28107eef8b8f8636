/** Small hand-written SVG line charts: log-scale x axis, linear or log y axis, a legend. */

export interface Series {
  readonly name: string
  readonly points: readonly (readonly [number, number])[]
  /** Dashed, for references such as the floor. */
  readonly dashed?: boolean
}

export interface Chart {
  readonly title: string
  readonly xLabel: string
  readonly yLabel: string
  readonly series: readonly Series[]
  readonly logY?: boolean
  /** Formats x tick labels (default: the number). */
  readonly xFormat?: (x: number) => string
}

const WIDTH = 720
const HEIGHT = 440
const MARGIN = { left: 70, right: 190, top: 40, bottom: 56 }
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#7f7f7f']

function escape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

function niceNumber(value: number): string {
  if (value >= 1000) return `${Number((value / 1000).toPrecision(3))}k`
  return String(Number(value.toPrecision(3)))
}

/** Ticks at powers of ten and their 2 and 5 multiples within [min, max]. */
function logTicks(min: number, max: number): number[] {
  const ticks: number[] = []
  for (let p = Math.floor(Math.log10(min)); p <= Math.ceil(Math.log10(max)); p++)
    for (const m of [1, 2, 5]) {
      const t = m * 10 ** p
      if (t >= min * 0.999 && t <= max * 1.001) ticks.push(t)
    }
  return ticks
}

function linearTicks(max: number): number[] {
  const step = 10 ** Math.floor(Math.log10(max / 5 || 1))
  const unit = [1, 2, 5, 10].map((m) => m * step).find((s) => max / s <= 6) ?? step * 10
  return Array.from({ length: Math.floor(max / unit) + 1 }, (_, i) => i * unit)
}

/** Renders `chart` as a standalone SVG document. */
export function lineChart(chart: Chart): string {
  const points = chart.series.flatMap((s) => s.points).filter(([x, y]) => x > 0 && y > 0)
  const xs = points.map(([x]) => x)
  const ys = points.map(([, y]) => y)
  const xMin = Math.min(...xs)
  const xMax = Math.max(...xs)
  const logY = chart.logY === true
  const yMin = logY ? Math.min(...ys) / 1.5 : 0
  const yMax = logY ? Math.max(...ys) * 1.5 : Math.max(...ys) * 1.1
  const plotW = WIDTH - MARGIN.left - MARGIN.right
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom
  const xLog = (x: number): number =>
    (Math.log10(x) - Math.log10(xMin)) / (Math.log10(xMax) - Math.log10(xMin) || 1)
  const px = (x: number): number => MARGIN.left + xLog(x) * plotW
  const py = (y: number): number => {
    const t = logY
      ? (Math.log10(y) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin) || 1)
      : (y - yMin) / (yMax - yMin || 1)
    return MARGIN.top + (1 - t) * plotH
  }
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2 - MARGIN.right / 2}" y="22" text-anchor="middle" font-size="15">${escape(chart.title)}</text>`,
  ]
  const format = chart.xFormat ?? niceNumber
  for (const t of logTicks(xMin, xMax)) {
    out.push(
      `<line x1="${px(t)}" x2="${px(t)}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#eee"/>`,
      `<text x="${px(t)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${escape(format(t))}</text>`,
    )
  }
  for (const t of logY ? logTicks(yMin, yMax) : linearTicks(yMax)) {
    out.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${py(t)}" y2="${py(t)}" stroke="#eee"/>`,
      `<text x="${MARGIN.left - 6}" y="${py(t) + 4}" text-anchor="end">${niceNumber(t)}</text>`,
    )
  }
  out.push(
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 14}" text-anchor="middle">${escape(chart.xLabel)} (log scale)</text>`,
    `<text transform="translate(18 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(chart.yLabel)}${logY ? ' (log scale)' : ''}</text>`,
  )
  chart.series.forEach((series, i) => {
    const colour = COLOURS[i % COLOURS.length]!
    const valid = series.points.filter(([x, y]) => x > 0 && y > 0 && Number.isFinite(y))
    const path = valid.map(
      ([x, y], j) => `${j === 0 ? 'M' : 'L'}${px(x).toFixed(1)},${py(y).toFixed(1)}`,
    )
    const dash = series.dashed === true ? ' stroke-dasharray="6 4"' : ''
    out.push(`<path d="${path.join(' ')}" fill="none" stroke="${colour}" stroke-width="2"${dash}/>`)
    for (const [x, y] of valid)
      out.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${colour}"/>`)
    const ly = MARGIN.top + 10 + i * 20
    const lx = WIDTH - MARGIN.right + 14
    out.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"${dash}/>`,
      `<text x="${lx + 30}" y="${ly + 4}">${escape(series.name)}</text>`,
    )
  })
  out.push('</svg>')
  return out.join('\n') + '\n'
}
