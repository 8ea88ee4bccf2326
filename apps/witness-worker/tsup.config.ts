import { app } from "../../tsup.presets";

export default app();
