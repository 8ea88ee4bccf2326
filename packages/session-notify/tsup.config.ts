import { library } from "../../tsup.presets";

export default library();
