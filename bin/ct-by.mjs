import { main } from "../dist/src/by/main.js";
process.exitCode = await main(process.argv.slice(2));
