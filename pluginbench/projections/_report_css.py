"""The report's stylesheet, embedded inline so report.html needs no other file."""

CSS = """
:root { --fg: #1d2330; --muted: #5d6675; --line: #d9dee7; --zebra: #f6f8fb;
        --good: #11713a; --good-bg: #e3f4e9; --bad: #b42318; --bad-bg: #fdecea;
        --flat: #5d6675; --accent: #2f5fb3; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; color: var(--fg); background: #fff;
       font: 14px/1.45 "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 20px 0 6px; }
.subtitle { color: var(--muted); margin: 0 0 16px; }
dl.identity { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr));
              gap: 6px 18px; margin: 0; padding: 12px 16px; background: var(--zebra);
              border: 1px solid var(--line); border-radius: 6px; }
dl.identity div { min-width: 0; }
dl.identity dt { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
dl.identity dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
.banner { margin: 16px 0; padding: 14px 18px; border-radius: 6px; background: #c62828;
          color: #fff; font-size: 16px; border: 3px solid #8e0000; }
.banner strong { display: block; font-size: 20px; letter-spacing: .03em; }
ul.notes { margin: 8px 0; padding-left: 20px; }
ul.notes li { margin: 3px 0; }
table { border-collapse: collapse; margin: 8px 0; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 10px; border: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { background: #eef1f6; font-weight: 600; }
thead th.arm { text-align: center; background: #e2e8f2; }
tbody tr:nth-child(even) { background: var(--zebra); }
tbody th { font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
tfoot td, tfoot th { background: #eef1f6; font-weight: 600; border-top: 2px solid #aab3c2; }
.good { color: var(--good); background: var(--good-bg); font-weight: 600; }
.bad { color: var(--bad); background: var(--bad-bg); font-weight: 600; }
.flat { color: var(--flat); }
.unknown { color: #8a5a00; font-style: italic; }
.not-applicable { color: var(--muted); font-style: italic; }
.delta-better { color: var(--good); background: var(--good-bg); font-weight: 600; }
.delta-worse { color: var(--bad); background: var(--bad-bg); font-weight: 600; }
.excluded { color: var(--muted); font-style: italic; }
.small { font-size: 12px; color: var(--muted); }
.interval { color: var(--muted); white-space: nowrap; }
tfoot .interval, tfoot .excluded { white-space: normal; display: block; font-weight: 400; }
#attempts-table td, #attempts-table th { white-space: nowrap; }
#attempts-table td:last-child { white-space: normal; min-width: 240px; }
#per-task-table tbody th, #missing-values-table code { white-space: nowrap; }
details { margin: 8px 0; }
summary { cursor: pointer; color: var(--accent); font-weight: 600; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
"""
