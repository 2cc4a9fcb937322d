import { main } from "../dist/src/bx/main.js";
process.exitCode = await main(process.argv.slice(2));
