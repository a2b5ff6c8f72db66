// Runs server/pages/web/player.js's pure helpers on what tests/web/test_player_js.py sends on
// stdin: {"charts": [ratings...], "ratings": [[rating, provisional]...], "changes": [n...],
// "streaks": [[streak, best]...]}; writes {"charts": [[[x, y]...]...], "ratings": [text...],
// "changes": [text...], "streaks": [text...]}.
import { chartPoints, ratingText, changeText, streakText } from "../../server/pages/web/player.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const job = JSON.parse(input);
process.stdout.write(
  JSON.stringify({
    charts: job.charts.map((r) => chartPoints(r)),
    ratings: job.ratings.map(([r, p]) => ratingText(r, p)),
    changes: job.changes.map((n) => changeText(n)),
    streaks: job.streaks.map(([s, b]) => streakText(s, b)),
  }),
);
