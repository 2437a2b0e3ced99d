import { sign } from "./calc";

console.log(sign(2));
